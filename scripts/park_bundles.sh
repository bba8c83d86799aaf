#!/usr/bin/env bash
# Builds the kernels of bench/NOTES.md section 15 (convert-dgemm-to-nvvm's
# experimental epilogue-warps) for an A/B run on the GPU machine:
#   scripts/park_bundles.sh [OUT_DIR]      (default build-ptx/park)
# OUT_DIR/def   the default 192-column in-place kernel (5 stages, no park)
# OUT_DIR/p192  192 columns, 3 stages, tiles parked
# OUT_DIR/p128  128 columns, 4 stages, tiles parked
# Then, on the GPU machine (carry OUT_DIR; the runtime built in /tmp/rt):
#   F=DGEMM_IN_PLACE_ONLY=1,DGEMM_CLUSTER_M=1
#   PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so python3 bench/ab.py \
#     OUT_DIR/def@DGEMM_BLOCK_N=192,$F OUT_DIR/p192@DGEMM_STAGES=3,DGEMM_BLOCK_N=192,$F \
#     OUT_DIR/p128@DGEMM_STAGES=4,DGEMM_BLOCK_N=128,DGEMM_QUAD_B=0,$F --rounds 12 --shapes large
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/build-ptx/park}
translate=${DGEMM_TRANSLATE:-$root/build/bin/dgemm-translate}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
describe() { # block_n stages
  cat <<DESC
dgemm.gemm @wgrad k_grouped_contiguous nt m = 4096 n = 7168 k = ?
    groups = 4 : (f8E4M3FN, f8E4M3FN) -> f32 accumulate recipe [1, 1, 128]
    config <block_m = 128, block_n = $1, block_k = 128, stages = $2,
            desc_slots = 2, math_warpgroups = 2, cluster_m = 1, cluster_n = 1,
            swizzle_a = 128, swizzle_b = 128, num_sms = 132, in_place_only = 1>
DESC
}
rm -rf "$out"
describe 192 5 > "$tmp/def.mlir"
describe 192 3 > "$tmp/p192.mlir"
describe 128 4 > "$tmp/p128.mlir"
"$translate" --dgemm-to-ptx "$tmp/def.mlir" --bundle-dir "$out/def" -o /dev/null
for k in p192 p128; do
  "$translate" --dgemm-to-ptx "$tmp/$k.mlir" --bundle-dir "$out/$k" \
    --pipeline-options="epilogue-warps" -o /dev/null
done
grep -H smem_bytes "$out"/*/*.meta
