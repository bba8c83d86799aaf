#!/usr/bin/env bash
# The heuristics' sweeps on the GPU machine: interleaved bench/ab.py calls that
# time the runtime's choice against forced alternatives (tile width, epilogue,
# raster band), on the shapes the rules in docs/Heuristics.md were set from and
# on groups of mixed length. Builds the runtime first; one log per sweep.
#   scripts/device_sweep.sh BUNDLE_DIR [SWEEP ...]
# SWEEPs (default: all, in this order):
#   short      tile width and epilogue on uniform short groups (NOTES section 22)
#   short-rev  the same bundles in the reverse order
#   short-sep  the same with a separate c
#   mixed      groups of mixed length: the rules count blocks, so a call follows
#              the majority of its blocks
#   band       the raster band on the large shapes (NOTES sections 20-21)
#   park       in place at 9-16 blocks per group, around the rules' switch from
#              the register epilogue (up to 11 blocks) to the parked kernel:
#              the register, reduction, parked and unparked in-place kernels
#   park-rev   the same bundles in the reverse order
#   bimodal    in place, short groups (2-8 blocks) beside long ones (16-32): the
#              default against the parked kernel and the register epilogue, both
#              orders (NOTES section 24 fitted the in-place time model on these)
#   bimodal2   the same on groups of two lengths the model was not fitted on
#   skewed     in place, log-normal lengths as MoE routing gives them: the default
#              against the parked, unparked, reduction kernels and 64/192 columns
#   skewed-sep the same lengths with a separate c: 64, 128 and 192 columns
#   redmix     in place, two lengths around 8 blocks: the default against the
#              reduction kernel, the register epilogue and the parked kernel
#   calib      in place, the H200 calibration's untimed choices and calls it
#              was not fitted on: the default against the register epilogue,
#              the reduction and parked kernels and 64 columns, both orders
# Environment: OUT (logs, default /tmp/dgemm-sweep), DGEMM_RT_BUILD (default
# /tmp/rt), ROUNDS (default 30), SWEEP_TIMEOUT (seconds per ab.py call,
# default 240).
set -u
bundle=${1:?bundle directory}; shift
sweeps=${*:-short short-rev short-sep mixed band park park-rev bimodal bimodal2 skewed skewed-sep redmix calib}
OUT=${OUT:-/tmp/dgemm-sweep}; mkdir -p "$OUT"
BUILD=${DGEMM_RT_BUILD:-/tmp/rt}
rounds=${ROUNDS:-30}
CC=/usr/bin/gcc CXX=/usr/bin/g++ cmake -G Ninja -S runtime -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
card=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null || echo unknown)
echo "card: $card" | tee "$OUT/card.txt"

B=$bundle
short_shapes=seed,8:2048:2048:256,32:4096:2048:256,16:4096:4096:512,4:4096:4096:640,16:7168:2048:768,8:4096:2048:896,8:4096:2048:1024
# Mixed lengths: drawn around 5-8 and 6-11 blocks (straddling the rules' 6 and 8),
# around 3-5 blocks, a skewed call whose blocks sit mostly in two long groups,
# one whose short groups hold most blocks, and one with empty groups.
mixed_shapes=8:4096:2048:~768,8:4096:4096:~1024,16:7168:2048:~1024,32:4096:2048:~512
mixed_shapes+=,8:4096:4096:128/128/256/256/512/1024/4096/8192
mixed_shapes+=,16:4096:4096:256/256/256/256/256/256/256/256/256/256/256/256/2048/2048/2048/2048
mixed_shapes+=,8:4096:2048:0/0/1024/1024/0/2048/512/512

park_shapes=8:4096:4096:1152,8:4096:4096:1280,8:4096:4096:1408,8:4096:4096:1536
park_shapes+=,4:4096:4096:1280,4:4096:4096:1536,8:4096:4096:2048
park_shapes+=,8:7168:2048:1280,8:7168:2048:1536,8:4096:7168:1280,8:4096:7168:1536
park_shapes+=,16:4096:4096:~1280,16:7168:2048:~1536

bimodal() {   # G:M:N: followed by COUNTxBLOCKS words, e.g. 16:4096:4096 12x2 4x16
  local head=$1; shift; local ks=()
  for w in "$@"; do for ((i = 0; i < ${w%x*}; i++)); do ks+=($((${w#*x} * 128))); done; done
  local IFS=/; echo "$head:${ks[*]}"
}
bimodal_shapes=$(bimodal 16:4096:4096 4x2 12x16),$(bimodal 16:4096:4096 8x2 8x16)
bimodal_shapes+=,$(bimodal 16:4096:4096 12x2 4x16),$(bimodal 16:4096:4096 14x2 2x16)
bimodal_shapes+=,$(bimodal 16:4096:4096 8x4 8x24),$(bimodal 16:4096:4096 12x4 4x24)
bimodal_shapes+=,$(bimodal 8:4096:4096 4x8 4x32),$(bimodal 8:4096:4096 6x8 2x32)
# Groups of two lengths that the time model of section 24 was not fitted on.
bimodal2_shapes=$(bimodal 16:4096:7168 8x2 8x16),$(bimodal 16:7168:2048 12x4 4x24)
bimodal2_shapes+=,$(bimodal 16:4096:4096 6x6 10x20),$(bimodal 8:4096:4096 2x1 6x14)
bimodal2_shapes+=,$(bimodal 16:4096:4096 4x10 12x13),$(bimodal 32:4096:2048 16x3 16x12)
bimodal2_shapes+=,$(bimodal 16:4096:4096 2x3 14x14),$(bimodal 8:4096:7168 3x5 5x28)
# The H200 calibration's choices that its fitting sweep did not time (uniform
# groups of 3-6 blocks: the reduction kernel at 128 columns; of 7-8 blocks on
# 4096 x 2048: the park), then 13 calls it was not fitted on (bench/NOTES.md
# section 26): drawn lengths, two more mixes, and the bimodal2 shapes.
calib_shapes=16:4096:4096:384,16:4096:4096:512,4:4096:4096:640,8:4096:4096:768
calib_shapes+=,16:7168:2048:768,8:4096:2048:896,8:4096:2048:1024
calib_shapes+=,8:7168:2048:~768,16:4096:7168:~640,32:4096:4096:~1024
calib_shapes+=,$(bimodal 16:4096:4096 8x3 8x12),$(bimodal 16:4096:4096 4x5 12x9)
calib_shapes+=,$bimodal2_shapes
# Groups of two lengths around the reduction kernel's 8 blocks.
redmix_shapes=$(bimodal 16:4096:4096 8x8 8x16),$(bimodal 16:4096:4096 12x8 4x16)
redmix_shapes+=,$(bimodal 16:4096:4096 12x4 4x16),$(bimodal 16:4096:4096 10x6 6x12)
redmix_shapes+=,$(bimodal 16:7168:2048 12x8 4x24),$(bimodal 8:4096:4096 4x7 4x9)
redmix_shapes+=,$(bimodal 8:4096:4096 6x8 2x20),$(bimodal 32:4096:2048 24x2 8x10)
# Skewed lengths, as MoE routing gives them: tokens per expert drawn log-normal
# (python's random.Random(2026).lognormvariate, sigma 0.8-1.2, means of 4-16 blocks),
# rounded to 128; empty groups among them.
skewed_shapes=32:7168:2048:128/768/256/896/1792/3456/1792/256/384/1664/256/640/384/384/5504/768/1152/512/896/128/1792/512/256/2560/640/384/896/640/3712/512/768/896
skewed_shapes+=,16:4096:7168:2560/640/768/1792/768/768/384/1024/3072/2560/128/896/384/768/7168/256
skewed_shapes+=,64:2048:2048:640/128/512/1536/384/0/256/128/896/0/128/0/128/128/2176/512/256/128/384/256/384/128/0/384/512/128/256/128/128/640/256/256/4992/2304/128/2176/1024/0/384/384/128/128/128/1152/384/384/0/128/128/0/640/640/1024/1024/512/896/128/3968/128/256/384/256/384/0
skewed_shapes+=,16:7168:2048:896/1792/1792/1152/1280/512/2304/1024/640/1408/3328/1792/5504/640/2432/5120
skewed_shapes+=,32:4096:4096:2432/512/384/896/2560/128/5376/3200/256/1280/3200/12800/896/256/512/1408/384/128/768/256/256/1024/512/384/1024/3840/512/1152/896/1408/896/1280

ab() {   # ab LOG ARGS... (LOG is started afresh)
  local log=$1; shift
  logs+=" $log"
  echo "=== bench/ab.py $*" > "$OUT/$log"
  PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    timeout "${SWEEP_TIMEOUT:-240}" python3 bench/ab.py "$@" >> "$OUT/$log" 2>&1
  local r=$?
  echo "=== exit $r" >> "$OUT/$log"
  echo "$log: exit $r"
  return $r
}

rc=0
logs=
for s in $sweeps; do
  case $s in
    short) ab short.log "$B" "$B@DGEMM_BLOCK_N=64" "$B@DGEMM_BLOCK_N=128" \
             "$B@DGEMM_BLOCK_N=192" "$B@DGEMM_RED_MAX_BLOCKS=0" "$B@DGEMM_RED_MAX_BLOCKS=8" \
             --shapes "$short_shapes" --rounds "$rounds" || rc=1 ;;
    short-rev) ab short-rev.log "$B" "$B@DGEMM_RED_MAX_BLOCKS=8" "$B@DGEMM_RED_MAX_BLOCKS=0" \
                 "$B@DGEMM_BLOCK_N=192" "$B@DGEMM_BLOCK_N=128" "$B@DGEMM_BLOCK_N=64" \
                 --shapes "$short_shapes" --rounds "$rounds" || rc=1 ;;
    short-sep) ab short-sep.log "$B" "$B@DGEMM_BLOCK_N=64" "$B@DGEMM_BLOCK_N=128" \
                 "$B@DGEMM_BLOCK_N=192" --separate-c \
                 --shapes "$short_shapes" --rounds "$rounds" || rc=1 ;;
    mixed) ab mixed.log "$B" "$B@DGEMM_BLOCK_N=64" "$B@DGEMM_BLOCK_N=128" \
             "$B@DGEMM_BLOCK_N=192" "$B@DGEMM_RED_MAX_BLOCKS=0" "$B@DGEMM_RED_MAX_BLOCKS=8" \
             "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=0" \
             --shapes "$mixed_shapes" --rounds "$rounds" || rc=1 ;;
    band) ab band.log "$B" "$B@DGEMM_RASTER_BAND=0" "$B@DGEMM_RASTER_BAND=8" \
            "$B@DGEMM_RASTER_BAND=16" --shapes large --rounds 20 || rc=1 ;;
    park) ab park.log "$B" "$B@DGEMM_RED_MAX_BLOCKS=0" "$B@DGEMM_RED_MAX_BLOCKS=0,DGEMM_CLUSTER_M=2" \
            "$B@DGEMM_RED_MAX_BLOCKS=8" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
            "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=0" --shapes "$park_shapes" \
            --rounds "$rounds" || rc=1 ;;
    park-rev) ab park-rev.log "$B" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=0" \
                "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
                "$B@DGEMM_RED_MAX_BLOCKS=8" "$B@DGEMM_RED_MAX_BLOCKS=0,DGEMM_CLUSTER_M=2" \
                "$B@DGEMM_RED_MAX_BLOCKS=0" \
                --shapes "$park_shapes" --rounds "$rounds" || rc=1 ;;
    bimodal|bimodal2)
      shapes=$bimodal_shapes
      [ "$s" = bimodal2 ] && shapes=$bimodal2_shapes
      ab $s.log "$B" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
        "$B@DGEMM_RED_MAX_BLOCKS=0,DGEMM_CLUSTER_M=2" "$B@DGEMM_RED_MAX_BLOCKS=0" \
        --shapes "$shapes" --rounds "$rounds" || rc=1
      ab $s-rev.log "$B" "$B@DGEMM_RED_MAX_BLOCKS=0" \
        "$B@DGEMM_RED_MAX_BLOCKS=0,DGEMM_CLUSTER_M=2" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
        --shapes "$shapes" --rounds "$rounds" || rc=1 ;;
    skewed) ab skewed.log "$B" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
              "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=0" "$B@DGEMM_RED_MAX_BLOCKS=8" \
              "$B@DGEMM_BLOCK_N=64" "$B@DGEMM_BLOCK_N=192" \
              --shapes "$skewed_shapes" --rounds "$rounds" || rc=1
            ab skewed-rev.log "$B" "$B@DGEMM_BLOCK_N=192" "$B@DGEMM_BLOCK_N=64" \
              "$B@DGEMM_RED_MAX_BLOCKS=8" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=0" \
              "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
              --shapes "$skewed_shapes" --rounds "$rounds" || rc=1 ;;
    skewed-sep) ab skewed-sep.log "$B" "$B@DGEMM_BLOCK_N=64" "$B@DGEMM_BLOCK_N=128" \
                  "$B@DGEMM_BLOCK_N=192" --separate-c \
                  --shapes "$skewed_shapes" --rounds "$rounds" || rc=1
                ab skewed-sep-rev.log "$B" "$B@DGEMM_BLOCK_N=192" "$B@DGEMM_BLOCK_N=128" \
                  "$B@DGEMM_BLOCK_N=64" --separate-c \
                  --shapes "$skewed_shapes" --rounds "$rounds" || rc=1 ;;
    calib) ab calib.log "$B" "$B@DGEMM_RED_MAX_BLOCKS=0" "$B@DGEMM_RED_MAX_BLOCKS=8" \
             "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" "$B@DGEMM_BLOCK_N=64" \
             --shapes "$calib_shapes" --rounds "$rounds" || rc=1
           ab calib-rev.log "$B" "$B@DGEMM_BLOCK_N=64" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
             "$B@DGEMM_RED_MAX_BLOCKS=8" "$B@DGEMM_RED_MAX_BLOCKS=0" \
             --shapes "$calib_shapes" --rounds "$rounds" || rc=1 ;;
    redmix) ab redmix.log "$B" "$B@DGEMM_RED_MAX_BLOCKS=8" "$B@DGEMM_RED_MAX_BLOCKS=0" \
              "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
              --shapes "$redmix_shapes" --rounds "$rounds" || rc=1
            ab redmix-rev.log "$B" "$B@DGEMM_IN_PLACE_ONLY=1,DGEMM_PARK=1" \
              "$B@DGEMM_RED_MAX_BLOCKS=0" "$B@DGEMM_RED_MAX_BLOCKS=8" \
              --shapes "$redmix_shapes" --rounds "$rounds" || rc=1 ;;
    *) echo "unknown sweep '$s' (short, short-rev, short-sep, mixed, band, park, park-rev, bimodal, bimodal2, skewed, skewed-sep, redmix, calib)"; rc=1 ;;
  esac
done
for log in $logs; do grep -h '^(' "$OUT/$log"; done > "$OUT/rows.txt"
exit $rc
