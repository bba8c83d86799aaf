#!/usr/bin/env bash
# Installs DeepGEMM 2.8.2, the peer of bench/bench_m_grouped.py and bench/first_call.py, on the
# GPU machine (no network there): from its PyPI sdist (`deepinfer-gemm`), carried in
# build-deps/deepgemm/, with the elfutils headers its build includes carried in
# build-deps/dg-include/ (from Debian's libdw-dev and libelf-dev). Takes about 2 minutes on 16
# cores; its kernels then JIT-compile with NVCC at their first call.
#
#   scripts/install_deepgemm.sh [SDIST]
#
# Fetching the two on a machine with network:
#   pip download --no-deps deepinfer-gemm==2.8.2 -d build-deps/deepgemm   (stops after the
#     download, at its build step, which needs torch: the tarball is what is wanted), and
#   apt-get download libdw-dev libelf-dev; dpkg -x each; copy usr/include to build-deps/dg-include.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sdist=${1:-$root/build-deps/deepgemm/deepinfer_gemm-2.8.2.tar.gz}
export CPATH=$root/build-deps/dg-include${CPATH:+:$CPATH}
work=$(mktemp -d)
tar xzf "$sdist" -C "$work"
cd "$work"/deepinfer_gemm-*
# The GPU machine's default g++ (/opt/gcc/bin) built torch extensions that segfaulted.
CC=/usr/bin/gcc CXX=/usr/bin/g++ DG_FORCE_BUILD=1 MAX_JOBS=${MAX_JOBS:-12} \
  python3 -m pip install --no-build-isolation --no-deps . >"$work/install.log" 2>&1 ||
  { tail -n 40 "$work/install.log"; exit 1; }
python3 -c 'import deep_gemm; print("DeepGEMM", getattr(deep_gemm, "__version__", "?"), "installed")'
