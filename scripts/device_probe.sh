#!/usr/bin/env bash
# Stability anatomy on the GPU machine: builds the runtime, then runs
# bench/race_probe.py with each given kernel bundle.
#   scripts/device_probe.sh CALLS "SHAPES" BUNDLE_DIR [BUNDLE_DIR ...]
# SHAPES: space-separated G:M:N:K. Environment: OUT (logs), DGEMM_RT_BUILD,
# PROBE_ENV (extra VAR=value words for every probe run).
set -u
calls=${1:?calls}; shapes=${2:?shapes}; shift 2
OUT=${OUT:-/tmp/dgemm-probe}; mkdir -p "$OUT"
BUILD=${DGEMM_RT_BUILD:-/tmp/rt}
CC=/usr/bin/gcc CXX=/usr/bin/g++ cmake -G Ninja -S runtime -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
for bundle in "$@"; do
  echo "#### bundle $bundle ${PROBE_ENV:-}" | tee -a "$OUT/probe.log"
  # shellcheck disable=SC2086
  env ${PROBE_ENV:-} PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    DGEMM_KERNEL_DIR="$bundle" timeout 300 python3 bench/race_probe.py "$calls" $shapes \
    2>&1 | tee -a "$OUT/probe.log"
done
