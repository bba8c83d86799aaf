#!/usr/bin/env bash
# A whole device round: builds the runtime, probes bitwise stability on large
# shapes (bench/race_probe.py), runs scripts/device_round.sh (tests,
# determinism, sanitizers, the unguarded race demonstration, pytest, bench),
# then the bug report's own script.
#   scripts/final_round.sh BUNDLES_ROOT [RACE_BUNDLE]
# BUNDLES_ROOT holds bundle/ (the default kernels), r1/ (--desc-slots=1) and
# unguarded/ (--desc-slots=1 --unsafe=skip_descriptor_drain: its kernels are
# named ..._unsafe_nodrain and marked unsafe in their .meta, and the race test
# opts in to loading them), all from dgemm-translate --bundle-all-candidates;
# RACE_BUNDLE (default BUNDLES_ROOT/unguarded) is the unguarded bundle the race
# demonstration uses.
# BUNDLES_ROOT/../seed_repro.py, if present, is the bug report's script;
# every BUNDLES_ROOT/opt-NAME, if present (a bundle built with other
# dgemm-translate options, e.g. --quad-b=0), gets the GPU tests and racecheck
# too, and bench/ab.py then times it against BUNDLES_ROOT/bundle. With the
# DeepGEMM peer library carried (build-peer/libdgemm_deepgemm_peer.so),
# bench.py times DeepGEMM's own kernel beside ours (and, with DGEMM_DEEPGEMM_AB=1,
# ab.py interleaves the two).
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
# Optional bundles built with non-default options, any ROOT/opt-NAME: the GPU
# correctness cases, the seed's determinism and racecheck on two in-place
# cases, each against its own bundle; then bench/ab.py times it against the
# default bundle (in place and with a separate c; a bitwise difference from
# the default is reported by ab.py and fails the round).
for extra in "$root"/opt-*; do
  [ -d "$extra" ] || continue
  name=$(basename "$extra")
  DGEMM_KERNEL_DIR="$extra" timeout 200 /tmp/rt/test/dgemm-runtime-gpu-tests \
    --gtest_filter='Cases/*RealBundle*:SeedCase/*RealBundle*:DeterminismTest.ReductionKernelOnSeedShapes' > "$OUT/$name-tests.log" 2>&1
  r1=$?
  DGEMM_KERNEL_DIR="$extra" timeout 200 compute-sanitizer --tool racecheck \
    --error-exitcode 1 /tmp/rt/test/dgemm-runtime-gpu-tests \
    --gtest_filter='Cases/*RealBundle_RaggedEdges:Cases/*RealBundle_RaggedEdgesReduction:Cases/*RealBundle_OddChunkCountInPlace' \
    > "$OUT/$name-racecheck.log" 2>&1
  r2=$?
  r3=0
  for mode in "" --separate-c; do
    PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so timeout 200 \
      python3 bench/ab.py "$root/bundle" "$extra" --rounds 20 $mode \
      >> "$OUT/$name-ab.log" 2>&1 || r3=1
  done
  echo "== $name bundle: gpu tests exit $r1 ($(grep -hE '^\[  (PASSED|FAILED)' "$OUT/$name-tests.log" | paste -sd' ')), racecheck exit $r2 ($(grep -h 'SUMMARY' "$OUT/$name-racecheck.log" | sort -u | paste -sd' ')), ab.py exit $r3" |
    tee -a "$OUT/summary.txt"
  [ "$r1" = 0 ] && [ "$r2" = 0 ] && [ "$r3" = 0 ] || rc=1
done
seed="$root/../seed_repro.py"
if [ -f "$seed" ]; then
  PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so \
    DGEMM_KERNEL_DIR="$root/bundle" timeout 300 python3 "$seed" \
    > "$OUT/seed-script.log" 2>&1
  echo "== seed script: exit $?, $(grep -c 'is nondeterministic' "$OUT/seed-script.log") failure lines" |
    tee -a "$OUT/summary.txt"
fi
# DeepGEMM's own kernel (build-peer/libdgemm_deepgemm_peer.so from
# scripts/build_deepgemm_peer.sh, carried): bench.py above already has its column;
# with DGEMM_DEEPGEMM_AB=1 it is also timed call by call against the default
# bundle (about a minute more). Never fails the round.
peer=${DGEMM_DEEPGEMM_PEER:-build-peer/libdgemm_deepgemm_peer.so}
if [ "${DGEMM_DEEPGEMM_AB:-0}" = 1 ] && [ -f "$peer" ]; then
  PYTHONPATH=python DGEMM_RUNTIME_LIB=/tmp/rt/libdgemm_runtime.so timeout 300 \
    python3 bench/ab.py "$root/bundle" "deepgemm=$peer" --shapes seed,large --rounds 20 \
    > "$OUT/deepgemm-ab.log" 2>&1
  echo "== ab.py against DeepGEMM: exit $?" | tee -a "$OUT/summary.txt"
fi
grep -h "ERROR SUMMARY" "$OUT/sanitizer.log" >> "$OUT/summary.txt" 2>/dev/null
rm -f "$OUT/build.log" "$OUT/host-tests.log" "$OUT/sanitizer.log" "$OUT/gpu-tests.log"
exit $rc
