#!/usr/bin/env bash
# The main job: builds dgemm, lowers examples/seed_wgrad.mlir (or the file
# given) stage by stage and writes its sm_90a PTX, then writes the kernel
# bundle the runtime loads (every candidate kernel of every kind in
# examples/kernels.mlir), assembles its kernels with ptxas and prints their
# resource use.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DGEMM_BUILD_DIR:-$root/build}
out=${DGEMM_OUT:-$root/out}
example=${1:-$root/examples/seed_wgrad.mlir}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" >/dev/null
mkdir -p "$out"
opt="$build/bin/dgemm-opt"

echo "== 1. the description, with the configuration the heuristics choose"
"$opt" "$example" --dgemm-select-config | tee "$out/1-config.mlir"
echo
echo "== 2. the kernel IR before synchronization: $out/2-kernel.mlir"
"$opt" "$out/1-config.mlir" --dgemm-lower-to-kernel --canonicalize > "$out/2-kernel.mlir"
echo "== 3. with derived synchronization (checked by dgemm-verify-sync): $out/3-synced.mlir"
"$opt" "$out/2-kernel.mlir" --dgemm-place-sync --dgemm-verify-sync > "$out/3-synced.mlir"
grep -E "dgemm\.(wait|arrive|mma\.wait|desc\.)" "$out/3-synced.mlir" | sed 's/^ */   /'
echo "== 4. NVVM + LLVM dialect: $out/4-llvm.mlir"
"$opt" "$example" --dgemm-to-llvm > "$out/4-llvm.mlir"
ptx="$out/$(basename "$example" .mlir).ptx"
echo "== 5. PTX: $ptx"
"$build/bin/dgemm-translate" --dgemm-to-ptx "$example" -o "$ptx"
grep -cE "wgmma.mma_async|cp.async.bulk.tensor|tensormap.replace|fence.proxy.tensormap" "$ptx" \
  | xargs echo "   async/tensormap instructions in the PTX:"
echo "== 6. the kernel bundle of examples/kernels.mlir (every candidate of every kind): $out/bundle"
rm -rf "$out/bundle"
"$build/bin/dgemm-translate" --dgemm-to-ptx "$root/examples/kernels.mlir" -o /dev/null \
  --bundle-dir="$out/bundle"
grep -c '^kernel=' "$out/bundle/index.txt" | xargs echo "   kernels in the bundle:"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [[ -x "$ptxas" ]]; then
  echo "== 7. ptxas -arch=sm_90a on every kernel of the bundle"
  python3 "$root/test/Target/PTX/Inputs/assemble.py" "$ptxas" "$out/bundle"
fi
