#!/usr/bin/env bash
# Builds build-peer/libdgemm_deepgemm_peer.so: DeepGEMM's SM90 k-grouped FP8 1D1D kernel behind
# the C ABI of bench/peers/deepgemm_kgrouped.cu, for bench/bench.py's side-by-side column.
#
#   scripts/build_deepgemm_peer.sh [OUT_DIR]      (default build-peer)
#
# DeepGEMM is not part of this repository. Its device headers (with the CUTLASS/CuTe headers
# they include) come from the pinned `sgl-kernel` wheel on PyPI, which ships them for
# DeepGEMM's run-time compilation; the wheel is about 540 MB and is downloaded once into
# OUT_DIR/wheel. Needs pip, unzip and nvcc (CUDA 12.8 or newer; sm_90a). The library links
# the CUDA runtime statically and depends on nothing else from CUDA but the driver, so it can
# be built on a machine without a GPU and carried to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build-peer}
wheel_version=0.3.21
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
mkdir -p "$out/wheel"
if [ "$(cat "$out/include/.sgl-kernel-version" 2>/dev/null)" != "$wheel_version" ]; then
  if ! ls "$out"/wheel/sgl_kernel-"$wheel_version"-*.whl >/dev/null 2>&1; then
    python3 -m pip download --no-deps --quiet "sgl-kernel==$wheel_version" -d "$out/wheel"
  fi
  rm -rf "$out/include" "$out/unpack"
  unzip -q "$out"/wheel/sgl_kernel-"$wheel_version"-*.whl 'deep_gemm/include/*' -d "$out/unpack"
  mv "$out/unpack/deep_gemm/include" "$out/include"
  rm -rf "$out/unpack"
  echo "$wheel_version" > "$out/include/.sgl-kernel-version"
fi
# The flags of DeepGEMM's own run-time compilation (C++20, ptxas register-usage level 10).
"$nvcc" -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a --expt-relaxed-constexpr \
  --diag-suppress=39,161,174,177,186,940,20168 --ptxas-options=--register-usage-level=10 \
  -shared -Xcompiler -fPIC -I"$out/include" bench/peers/deepgemm_kgrouped.cu \
  -o "$out/libdgemm_deepgemm_peer.so" 2>&1 | { grep -v 'Advisory' || true; }
test -f "$out/libdgemm_deepgemm_peer.so"
echo "built $out/libdgemm_deepgemm_peer.so (DeepGEMM headers from sgl-kernel $wheel_version)"
