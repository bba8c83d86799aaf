#!/usr/bin/env bash
# A whole device round: builds the runtime, probes bitwise stability on large
# shapes (bench/race_probe.py), runs scripts/device_round.sh (tests,
# determinism, sanitizers, the unguarded race demonstration, pytest, bench),
# then the bug report's own script.
#   scripts/final_round.sh BUNDLES_ROOT [RACE_BUNDLE]
# BUNDLES_ROOT holds bundle/ (the default kernels), r1/ (--desc-slots=1) and
# unguarded/ (--desc-slots=1 --unsafe-skip-descriptor-drain), all from
# dgemm-translate --bundle-all-candidates; RACE_BUNDLE (default
# BUNDLES_ROOT/unguarded) is the unguarded bundle the race demonstration uses.
# BUNDLES_ROOT/../seed_repro.py, if present, is the bug report's script.
set -u
root=${1:?bundles root}
race=${2:-$root/unguarded}
OUT=${OUT:-/tmp/dgemm-device-round}; mkdir -p "$OUT"
CC=/usr/bin/gcc CXX=/usr/bin/g++ cmake -G Ninja -S runtime -B /tmp/rt \
  -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/rt >/dev/null || exit 1
PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so \
  DGEMM_KERNEL_DIR="$root/bundle" timeout 200 python3 bench/race_probe.py 20 \
  16:7168:2048:2048 8:7168:2048:4096 4:4096:7168:8192 1:7168:2048:8192 2>&1 |
  grep -v '^  call' | tee "$OUT/probe.log"
DGEMM_RT_BUILD=/tmp/rt bash scripts/device_round.sh "$root/bundle" "$race" "$root/r1"
rc=$?
seed="$root/../seed_repro.py"
if [ -f "$seed" ]; then
  PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so \
    DGEMM_KERNEL_DIR="$root/bundle" timeout 300 python3 "$seed" \
    > "$OUT/seed-script.log" 2>&1
  echo "== seed script: exit $?, $(grep -c 'is nondeterministic' "$OUT/seed-script.log") failure lines" |
    tee -a "$OUT/summary.txt"
fi
grep -h "ERROR SUMMARY" "$OUT/sanitizer.log" >> "$OUT/summary.txt" 2>/dev/null
rm -f "$OUT/build.log" "$OUT/host-tests.log" "$OUT/sanitizer.log" "$OUT/gpu-tests.log"
exit $rc
