#!/usr/bin/env bash
# Configures and builds dgemm (compiler, tools, runtime, tests) in build/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DGEMM_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "${DGEMM_JOBS:-$(nproc)}"
