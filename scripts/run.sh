#!/usr/bin/env bash
# The main job: builds dgemm, lowers examples/seed_wgrad.mlir stage by stage
# and writes its sm_90a PTX (plus the kernel bundle the runtime loads), then
# assembles the kernels with ptxas and prints their resource use.
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
echo "== 5. PTX: $out/seed_wgrad.ptx, kernel bundle: $out/bundle"
"$build/bin/dgemm-translate" --dgemm-to-ptx "$example" -o "$out/seed_wgrad.ptx" \
  --bundle-dir="$out/bundle" --bundle-all-candidates
grep -cE "wgmma.mma_async|cp.async.bulk.tensor|tensormap.replace|fence.proxy.tensormap" "$out/seed_wgrad.ptx" \
  | xargs echo "   async/tensormap instructions in the PTX:"
ptxas=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
if [[ -x "$ptxas" ]]; then
  echo "== 6. ptxas -arch=sm_90a on every kernel of the bundle"
  python3 "$root/test/Target/PTX/Inputs/assemble.py" "$ptxas" "$out/bundle"
fi
