#!/usr/bin/env bash
# Nsight Compute profile of one k-grouped call on the GPU machine: builds the
# runtime, then profiles the third call of bench/profile_one.py.
#   scripts/device_profile.sh BUNDLE_DIR G:M:N:K [NAME]
# Writes to $OUT: NAME.ncu-rep, NAME-details.txt (every section),
# NAME-sass.csv (per-instruction warp-stall samples, for offline analysis) and
# NAME-wavefronts.txt (scripts/ncu_wavefronts.py's sums per opcode).
# With DGEMM_PROFILE_DEEPGEMM=LIBRARY it profiles DeepGEMM's own kernel
# (bench/profile_one.py) instead; DGEMM_PROFILE_KERNEL overrides the kernel-name
# regex (default: dgemm, or sm90_fp8 for DeepGEMM). DGEMM_PROFILE_IN_PLACE=1 is
# passed on.
set -u
kernel=${DGEMM_PROFILE_KERNEL:-$([ -n "${DGEMM_PROFILE_DEEPGEMM:-}" ] && echo sm90_fp8 || echo dgemm)}
bundle=${1:?bundle dir}; shape=${2:?G:M:N:K}; name=${3:-profile}
OUT=${OUT:-/tmp/dgemm-profile}; mkdir -p "$OUT"
BUILD=${DGEMM_RT_BUILD:-/tmp/rt}
CC=/usr/bin/gcc CXX=/usr/bin/g++ cmake -G Ninja -S runtime -B "$BUILD" \
  -DCMAKE_BUILD_TYPE=Release >"$OUT/build.log" 2>&1 &&
  cmake --build "$BUILD" --target dgemm_runtime >>"$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log"; exit 1; }
PYTHONPATH=python DGEMM_RUNTIME_LIB="$BUILD/libdgemm_runtime.so" \
  DGEMM_KERNEL_DIR="$bundle" timeout 400 ncu --clock-control none --set full \
  --import-source no -k regex:$kernel --launch-skip 2 --launch-count 1 \
  -f -o "$OUT/$name" python3 bench/profile_one.py "$shape" 4 >"$OUT/$name-ncu.log" 2>&1 ||
  { tail -20 "$OUT/$name-ncu.log"; exit 1; }
ncu -i "$OUT/$name.ncu-rep" --page details > "$OUT/$name-details.txt"
ncu -i "$OUT/$name.ncu-rep" --page source --print-source sass --csv > "$OUT/$name-sass.csv"
# Shared-memory wavefronts and instructions per opcode (bench/NOTES.md section 26).
python3 scripts/ncu_wavefronts.py "$OUT/$name-sass.csv" > "$OUT/$name-wavefronts.txt" ||
  echo "(no wavefront summary)"
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Bank Conflicts|Issue Slots Busy|No Eligible|Tensor" \
  "$OUT/$name-details.txt" | head -40
