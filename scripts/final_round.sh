#!/usr/bin/env bash
# Device round with an epilogue choice made on the device: probes the
# branch-free interior epilogue for bitwise stability on large shapes, then
# runs scripts/device_round.sh with the fast or the safe bundles.
#   scripts/final_round.sh BUNDLES_ROOT   (holds fast/ and safe/, each with
#   bundle/, unguarded/, r1/ from dgemm-translate)
set -u
root=${1:?bundles root}
OUT=${OUT:-/tmp/dgemm-device-round}; mkdir -p "$OUT"
CC=/usr/bin/gcc CXX=/usr/bin/g++ cmake -G Ninja -S runtime -B /tmp/rt \
  -DCMAKE_BUILD_TYPE=Release >/dev/null && cmake --build /tmp/rt >/dev/null || exit 1
PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so \
  DGEMM_KERNEL_DIR="$root/fast/bundle" timeout 120 python3 bench/stability.py 20 \
  16:7168:2048:2048 4:4096:7168:8192 1:7168:2048:8192 2>&1 | tee "$OUT/probe.log"
if [ "$(grep -c ' 0/20 calls differ' "$OUT/probe.log")" = 3 ]; then V=fast; else V=safe; fi
echo "== epilogue variant for this round: $V" | tee -a "$OUT/probe.log"
DGEMM_RT_BUILD=/tmp/rt bash scripts/device_round.sh "$root/$V/bundle" \
  "$root/$V/unguarded" "$root/$V/r1"
rc=$?
# The bug report's own script, import line changed to dgemm (docs/Python.md).
if [ -f "$root/seed_repro.py" ]; then
  PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so \
    DGEMM_KERNEL_DIR="$root/$V/bundle" timeout 300 python3 "$root/seed_repro.py" \
    > "$OUT/seed-script.log" 2>&1
  echo "== seed script: exit $?, $(grep -c 'is nondeterministic' "$OUT/seed-script.log") failure lines" |
    tee -a "$OUT/summary.txt"
fi
grep -h "ERROR SUMMARY" "$OUT/sanitizer.log" >> "$OUT/summary.txt" 2>/dev/null
rm -f "$OUT/build.log" "$OUT/host-tests.log" "$OUT/sanitizer.log" "$OUT/gpu-tests.log"
exit $rc
