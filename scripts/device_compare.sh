#!/usr/bin/env bash
# Same-call comparison of kernel bundles on the GPU machine: builds the
# runtime, then runs bench/bench.py --no-peers once per bundle (in the given
# order, so that clock drift shows as a trend), and optionally a stability
# probe (bench/race_probe.py) on the first bundle.
#   scripts/device_compare.sh BUNDLE_DIR [BUNDLE_DIR ...]
# Environment: OUT (logs, default /tmp/dgemm-compare), DGEMM_RT_BUILD,
# BENCH_ARGS (extra bench.py arguments), TAG (suffix of the log names), PROBE_CALLS (0 = no probe, default
# 10), PROBE_SHAPES (G:M:N:K words).
set -u
OUT=${OUT:-/tmp/dgemm-compare}; mkdir -p "$OUT"
BUILD=${DGEMM_RT_BUILD:-/tmp/rt}
CC=/usr/bin/gcc CXX=/usr/bin/g++ cmake -G Ninja -S runtime -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" >>"$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
rc=0
calls=${PROBE_CALLS:-10}
if [ "$calls" -gt 0 ]; then
  PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    DGEMM_KERNEL_DIR="$1" timeout 240 python3 bench/race_probe.py "$calls" \
    ${PROBE_SHAPES:-16:7168:2048:2048 4:4096:7168:8192 1:7168:2048:8192} 2>&1 |
    grep -v '^  call' | tee "$OUT/probe.log" || rc=1
fi
for bundle in "$@"; do
  name=$(basename "$bundle")
  # shellcheck disable=SC2086
  PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    DGEMM_KERNEL_DIR="$bundle" timeout 300 python3 bench/bench.py --no-peers \
    ${BENCH_ARGS:-} > "$OUT/bench-$name${TAG:-}.log" 2>&1 || rc=1
  echo "#### $bundle ${TAG:-}"; tail -16 "$OUT/bench-$name${TAG:-}.log"
done
exit $rc
