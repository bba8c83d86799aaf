#!/usr/bin/env bash
# One round of the runtime's checks on the GPU machine.
#
#   scripts/device_round.sh [BUNDLE_DIR] [UNGUARDED_BUNDLE_DIR] [ONE_SLOT_BUNDLE_DIR]
#
# BUNDLE_DIR: the kernel bundle to test (default: $DGEMM_KERNEL_DIR; without
#   one, the real-bundle GPU tests skip and only the reference kernel runs).
# UNGUARDED_BUNDLE_DIR: optional bundle built with the descriptor guard
#   disabled (dgemm-translate --unsafe=skip_descriptor_drain: entries named
#   ..._unsafe_nodrain, which the runtime loads only for a caller that opts
#   in, as the race test does); its determinism test must detect the race. It
#   is run with DGEMM_DESC_SLOTS=${DGEMM_RACE_DESC_SLOTS:-1} (one rewritten
#   descriptor per operand, DeepGEMM's scheme), so build it with
#   --desc-slots=1.
# ONE_SLOT_BUNDLE_DIR: optional guarded bundle built with --desc-slots=1; its
#   determinism test runs with DGEMM_DESC_SLOTS=1 (the drain really waits).
#
# Environment: OUT (logs, default /tmp/dgemm-device-round), DGEMM_RT_BUILD
# (build dir, default /tmp/rt), DGEMM_GTEST_SOURCE_DIR (GoogleTest sources if
# none is installed, which the GPU machine has; default build-deps/googletest),
# DGEMM_DETERMINISM_ITERS (default 10000), DGEMM_BENCH (default
# bench/bench.py), STEP_TIMEOUT (seconds per step, default 300),
# DGEMM_SANITIZERS (0 skips the compute-sanitizer steps, default 1),
# DGEMM_SKIP (step names not to run, e.g. "gpu-determinism pytest-gpu"; they
# show as SKIP), DGEMM_GPU_FILTER (the gpu-correctness step's GoogleTest
# filter, default every test but the determinism ones), DGEMM_PYTEST_ARGS
# (pytest's arguments, default "-q -rs python"), DGEMM_CHECK_ARGS (extra
# arguments of bench/check_m_grouped.py and bench/check_kinds.py, e.g.
# --small),
# DGEMM_INSTALL_DEEPGEMM (1: install DeepGEMM 2.8.2 from build-deps/ in the
# background while the round runs, scripts/install_deepgemm.sh),
# DGEMM_FIRST_CALL (1: bench/first_call.py --m-grouped at the end, cold, with
# DeepGEMM's first call beside dgemm's where it installed). Their output goes
# to bench.log. The BF16 GEMMs: bench/check_bf16.py (step bf16, with
# DGEMM_CHECK_ARGS, its own time limit DGEMM_BF16_TIMEOUT, default 1200 s;
# output to pytest.log) and bench/bench_bf16.py (step bench-bf16, arguments
# DGEMM_BENCH_BF16_ARGS, time limit DGEMM_BENCH_BF16_TIMEOUT, default 1800 s,
# DGEMM_BENCH_BF16=0 skips it; output to bench.log), both only where the
# bundle holds BF16 kernels. DGEMM_RASTER_BANDS (e.g. "0 8 16"): then, per band,
# bench_bf16.py --quick and bench_kinds.py with DGEMM_RASTER_BAND set (steps
# bands-B, output to bench.log; the experiment of bench/NOTES.md, "BF16 beside
# DeepGEMM"). DGEMM_WHEEL and DGEMM_BUNDLE_DIR reach the Python tests
# (python/tests/test_wheel.py installs and runs that wheel).
#
# Runs every step even after a failure; exits nonzero if any failed (a
# skipped test is not a failure). Writes at
# most 8 files to $OUT and prints a summary table last.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/dgemm-device-round}
BUILD=${DGEMM_RT_BUILD:-/tmp/rt}
BUNDLE=$(realpath -m "${1:-${DGEMM_KERNEL_DIR:-}}" 2>/dev/null || true)
[ -n "${1:-${DGEMM_KERNEL_DIR:-}}" ] || BUNDLE=
UNGUARDED=${2:-}
ONE_SLOT=${3:-}
[ -z "$ONE_SLOT" ] || ONE_SLOT=$(realpath -m "$ONE_SLOT")
[ -z "$UNGUARDED" ] || UNGUARDED=$(realpath -m "$UNGUARDED")
GTEST_SRC=${DGEMM_GTEST_SOURCE_DIR:-$ROOT/build-deps/googletest}
BENCH=${DGEMM_BENCH:-bench/bench.py}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
export DGEMM_DETERMINISM_ITERS=${DGEMM_DETERMINISM_ITERS:-10000}
mkdir -p "$OUT"

GPU_TESTS="$BUILD/test/dgemm-runtime-gpu-tests"
# Small enough for the sanitizers' slowdown; both bundles, empty groups and
# ragged edges; the reduction epilogue (forced) on ragged edges; the
# three-warpgroup kernel on ragged edges; two kernels that park their tiles
# (the math role and the workers hand tiles over through shared memory) on
# ragged edges.
SANITIZER_FILTER='Cases/KGroupedGemmTest.MatchesReference/*_MixedEmptyGroups:Cases/KGroupedGemmTest.MatchesReference/*_RaggedEdges:Cases/KGroupedGemmTest.MatchesReference/RealBundle_QuadRaggedEdgesReduction:Cases/KGroupedGemmTest.MatchesReference/RealBundle_ThreeWarpgroupsRaggedInPlaceKernel:Cases/KGroupedGemmTest.MatchesReference/RealBundle_ParkedWideTiles:Cases/KGroupedGemmTest.MatchesReference/RealBundle_Parked96Columns'

declare -a STEP_NAMES STEP_STATUS STEP_SECONDS STEP_NOTES
FAILED=0

# record NAME RC SECONDS STEPLOG: RC 0 = PASS, else FAIL.
record() {
  local name=$1 rc=$2 seconds=$3 log=$4 status note=""
  if [ "$rc" = 0 ]; then status=PASS; else status="FAIL($rc)"; FAILED=1; fi
  # GoogleTest's closing counts, if the step ran a test binary.
  note=$(grep -hE '^\[ +(PASSED|SKIPPED|FAILED) +\] [0-9]+ tests?' "$log" |
         sed -E 's/^\[ +([A-Z]+) +\] ([0-9]+) tests?.*/\2 \1/' |
         tr '[:upper:]' '[:lower:]' | paste -sd, -)
  STEP_NAMES+=("$name"); STEP_STATUS+=("$status")
  STEP_SECONDS+=("$seconds"); STEP_NOTES+=("$note")
}

# run NAME LOG COMMAND...: runs with a time limit; output goes to the
# terminal and is appended to LOG.
run() {
  local name=$1 log=$2 start rc steplog
  shift 2
  case " ${DGEMM_SKIP:-} " in
    *" $name "*) skip "$name" "DGEMM_SKIP"; return ;;
  esac
  steplog=$(mktemp)
  start=$(date +%s)
  echo "=== $name: $*" | tee -a "$log"
  timeout "$STEP_TIMEOUT" "$@" 2>&1 | tee "$steplog"
  rc=$?
  cat "$steplog" >> "$log"
  echo "=== $name: exit $rc" | tee -a "$log"
  record "$name" "$rc" $(( $(date +%s) - start )) "$steplog"
  rm -f "$steplog"
}

skip() { # skip NAME WHY
  echo "=== $1: skipped: $2"
  STEP_NAMES+=("$1"); STEP_STATUS+=(SKIP); STEP_SECONDS+=(0)
  STEP_NOTES+=("$2")
}

DG_PID=
if [ "${DGEMM_INSTALL_DEEPGEMM:-0}" = 1 ]; then
  ( bash scripts/install_deepgemm.sh; echo "install_deepgemm.sh: exit $?" ) \
    >>"$OUT/bench.log" 2>&1 &
  DG_PID=$!
fi

# --- 1. Build --------------------------------------------------------------
BUILD_LOG="$OUT/build.log"
{
  echo "bundle: ${BUNDLE:-<none>}"; echo "unguarded bundle: ${UNGUARDED:-<none>}"
  nvidia-smi -L 2>&1 || true
  nvcc --version 2>&1 | tail -n 2 || true
} | tee "$BUILD_LOG"
GTEST_ARG=()
[ -f "$GTEST_SRC/CMakeLists.txt" ] && GTEST_ARG=(-DDGEMM_GTEST_SOURCE_DIR="$GTEST_SRC")
run configure "$BUILD_LOG" env CC=/usr/bin/gcc CXX=/usr/bin/g++ \
  cmake -G Ninja -S runtime -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  "${GTEST_ARG[@]}"
run build "$BUILD_LOG" cmake --build "$BUILD" -j "$(nproc)"

# --- 2. Tests --------------------------------------------------------------
bundle_env=()
[ -n "$BUNDLE" ] && bundle_env=(DGEMM_KERNEL_DIR="$BUNDLE")

if [ -x "$BUILD/test/dgemm-runtime-tests" ]; then
  run host-tests "$OUT/host-tests.log" "$BUILD/test/dgemm-runtime-tests"
else
  skip host-tests "not built"
fi
if [ -x "$BUILD/heuristics/dgemm-heuristics-tests" ]; then
  run heuristics-tests "$OUT/host-tests.log" \
    "$BUILD/heuristics/dgemm-heuristics-tests"
fi

if [ -x "$GPU_TESTS" ]; then
  run gpu-correctness "$OUT/gpu-tests.log" env "${bundle_env[@]}" \
    "$GPU_TESTS" --gtest_filter="${DGEMM_GPU_FILTER:--*Determinism*}"
  run gpu-determinism "$OUT/determinism.log" env "${bundle_env[@]}" \
    "$GPU_TESTS" --gtest_filter='*Determinism*'
  if [ "${DGEMM_SANITIZERS:-1}" = 0 ]; then
    skip sanitizers "DGEMM_SANITIZERS=0"
  elif command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
      run "sanitizer-$tool" "$OUT/sanitizer.log" env "${bundle_env[@]}" \
        compute-sanitizer --tool "$tool" --error-exitcode 1 \
        "$GPU_TESTS" --gtest_filter="$SANITIZER_FILTER"
    done
  else
    skip sanitizers "compute-sanitizer not on PATH"
  fi
  if [ -n "$UNGUARDED" ]; then
    run race-detected "$OUT/race.log" env DGEMM_KERNEL_DIR="$UNGUARDED" \
      DGEMM_DESC_SLOTS="${DGEMM_RACE_DESC_SLOTS:-1}" \
      DGEMM_EXPECT_RACE=1 "$GPU_TESTS" \
      --gtest_filter='DeterminismTest.RaceIsDetectedWithoutGuard'
  else
    skip race-detected "no unguarded bundle given"
  fi
  if [ -n "$ONE_SLOT" ]; then
    run one-slot-determinism "$OUT/determinism.log" env \
      DGEMM_KERNEL_DIR="$ONE_SLOT" DGEMM_DESC_SLOTS=1 "$GPU_TESTS" \
      --gtest_filter='SeedCase/*RealBundle*:Cases/*RealBundle*:DeterminismTest.ReductionKernelOnSeedShapes'
  fi
else
  skip gpu-tests "not built"
fi

# --- 2b. Python package on the GPU -----------------------------------------
if [ -n "$BUNDLE" ] && python3 -c 'import torch, pytest' 2>/dev/null; then
  run pytest-gpu "$OUT/pytest.log" env PYTHONPATH=python \
    DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" DGEMM_KERNEL_DIR="$BUNDLE" \
    DGEMM_SEED_ITERS="${DGEMM_SEED_ITERS:-$DGEMM_DETERMINISM_ITERS}" \
    python3 -m pytest ${DGEMM_PYTEST_ARGS:--q -rs python}
else
  skip pytest-gpu "no bundle or no torch/pytest"
fi

# --- 2c. The m-grouped kernel ----------------------------------------------
# Its Python checks (bench/check_m_grouped.py: reference, poisoned padding
# rows, bitwise repeats), then the small cases under each sanitizer; output
# goes to pytest.log.
mg_env=(PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so"
        DGEMM_KERNEL_DIR="$BUNDLE")
if [ -n "$BUNDLE" ] && ls "$BUNDLE"/dgemm_mgrouped_* >/dev/null 2>&1 &&
   python3 -c 'import torch' 2>/dev/null; then
  run m-grouped "$OUT/pytest.log" env "${mg_env[@]}" \
    python3 bench/check_m_grouped.py --repeats "${DGEMM_MGROUPED_REPEATS:-5}" \
    ${DGEMM_CHECK_ARGS:-}
  if [ "${DGEMM_SANITIZERS:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
      run "mg-sanitizer-$tool" "$OUT/pytest.log" env "${mg_env[@]}" \
        compute-sanitizer --tool "$tool" --error-exitcode 1 \
        python3 bench/check_m_grouped.py --small --repeats 1
    done
  fi
else
  skip m-grouped "no m-grouped kernels in the bundle, or no torch"
fi
# The masked and normal 1D2D kernels and the 1D1D normal GEMM
# (bench/check_kinds.py), then its small cases under memcheck and racecheck.
if [ -n "$BUNDLE" ] && [ -f bench/check_kinds.py ] &&
   ls "$BUNDLE"/dgemm_*masked* >/dev/null 2>&1 &&
   python3 -c 'import torch' 2>/dev/null; then
  run kinds "$OUT/pytest.log" env "${mg_env[@]}" \
    python3 bench/check_kinds.py --repeats "${DGEMM_MGROUPED_REPEATS:-5}" \
    ${DGEMM_CHECK_ARGS:-}
  if [ "${DGEMM_SANITIZERS:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      run "kinds-sanitizer-$tool" "$OUT/pytest.log" env "${mg_env[@]}" \
        compute-sanitizer --tool "$tool" --error-exitcode 1 \
        python3 bench/check_kinds.py --small --repeats 1
    done
  fi
else
  skip kinds "no masked kernels in the bundle, no bench/check_kinds.py, or no torch"
fi

# The BF16 GEMMs (bench/check_bf16.py: every kind and layout, masked_m edges,
# graph replay, DeepGEMM's shapes), then its small cases under memcheck,
# racecheck and synccheck.
if [ -n "$BUNDLE" ] && [ -f bench/check_bf16.py ] &&
   ls "$BUNDLE"/dgemm_*_bf16_*.meta >/dev/null 2>&1 &&
   python3 -c 'import torch' 2>/dev/null; then
  STEP_TIMEOUT=${DGEMM_BF16_TIMEOUT:-1200} run bf16 "$OUT/pytest.log" \
    env "${mg_env[@]}" python3 bench/check_bf16.py \
    --repeats "${DGEMM_MGROUPED_REPEATS:-5}" ${DGEMM_CHECK_ARGS:-}
  if [ "${DGEMM_SANITIZERS:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
      run "bf16-sanitizer-$tool" "$OUT/pytest.log" env "${mg_env[@]}" \
        compute-sanitizer --tool "$tool" --error-exitcode 1 \
        python3 bench/check_bf16.py --small --repeats 1
    done
  fi
else
  skip bf16 "no BF16 kernels in the bundle, no bench/check_bf16.py, or no torch"
fi

# --- 2d. Cold first call ---------------------------------------------------
if [ "${DGEMM_FIRST_CALL:-0}" = 1 ] && [ -n "$BUNDLE" ]; then
  [ -z "$DG_PID" ] || wait "$DG_PID"
  run first-call "$OUT/bench.log" env PYTHONPATH=python CUDA_CACHE_DISABLE=1 \
    DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    python3 bench/first_call.py --bundle "$BUNDLE" --m-grouped \
    --processes "${DGEMM_FIRST_CALL_PROCESSES:-2}" --calls 500
fi

# --- 3. Benchmark ----------------------------------------------------------
if [ -f "$BENCH" ]; then
  run bench "$OUT/bench.log" env "${bundle_env[@]}" \
    PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    python3 "$BENCH" ${DGEMM_BENCH_ARGS:-}
else
  skip bench "$BENCH not present"
fi

# The BF16 GEMMs beside DeepGEMM's and torch's (bench/bench_bf16.py).
if [ "${DGEMM_BENCH_BF16:-1}" = 0 ]; then
  skip bench-bf16 "DGEMM_BENCH_BF16=0"
elif [ -n "$BUNDLE" ] && [ -f bench/bench_bf16.py ] &&
     ls "$BUNDLE"/dgemm_*_bf16_*.meta >/dev/null 2>&1; then
  [ -z "$DG_PID" ] || wait "$DG_PID" 2>/dev/null || true
  STEP_TIMEOUT=${DGEMM_BENCH_BF16_TIMEOUT:-1800} run bench-bf16 "$OUT/bench.log" \
    env PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    DGEMM_KERNEL_DIR="$BUNDLE" python3 bench/bench_bf16.py ${DGEMM_BENCH_BF16_ARGS:-}
else
  skip bench-bf16 "no BF16 kernels in the bundle or no bench/bench_bf16.py"
fi

# The raster band of the row-mapped launches, band by band (same process
# order each time; the peers in each process are the reference).
for band in ${DGEMM_RASTER_BANDS:-}; do
  [ -n "$BUNDLE" ] || break
  STEP_TIMEOUT=${DGEMM_BANDS_TIMEOUT:-300} run "bands-$band" "$OUT/bench.log" \
    env PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
    DGEMM_KERNEL_DIR="$BUNDLE" DGEMM_RASTER_BAND="$band" \
    bash -c 'python3 bench/bench_bf16.py --quick --reps 30 &&
             python3 bench/bench_kinds.py --reps 30'
done

# --- Summary ---------------------------------------------------------------
{
  echo
  grep -h '^\[ determinism \]' "$OUT/determinism.log" "$OUT/race.log" \
    2>/dev/null || true
  printf '\n%-18s %-9s %6s  %s\n' STEP STATUS SECONDS NOTES
  for i in "${!STEP_NAMES[@]}"; do
    printf '%-18s %-9s %6s  %s\n' "${STEP_NAMES[$i]}" "${STEP_STATUS[$i]}" \
      "${STEP_SECONDS[$i]}" "${STEP_NOTES[$i]}"
  done
  [ "$FAILED" = 0 ] && echo "device round: all steps passed or skipped" ||
    echo "device round: FAILED"
} | tee "$OUT/summary.txt"
exit "$FAILED"
