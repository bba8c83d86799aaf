#!/usr/bin/env bash
# The test command: installs what is missing, builds, then runs every test
# that needs no GPU -- lit/FileCheck (with ptxas on every generated kernel),
# GoogleTest (GPU tests skip with a message), and the Python package's tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DGEMM_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" --python
start=$(date +%s)
"$root/scripts/build.sh"
echo "== build took $(( $(date +%s) - start )) s"

status=0
echo "== ctest (lit + GoogleTest)"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" || status=1

# The mutation suite's and the fuzz run's counts (lit keeps passing tests' output to itself).
for f in "$build"/test/Mutation/Output/verify-sync-mutants.test.tmp.* \
         "$build"/test/Fuzz/Output/fuzz-opt.test.tmp/summary; do
  [ -f "$f" ] || continue
  grep -E "mutants made|candidate kernels|inputs run|SURVIVED|CRASH" "$f" |
    sed "s|^|   ${f#"$build"/test/}: |" || true
done

echo "== pytest (python/)"
export DGEMM_RUNTIME_LIB=${DGEMM_RUNTIME_LIB:-$(find "$build" -name 'libdgemm_runtime.so' | head -n 1)}
(cd "$root" && PYTHONPATH=python ${PYTHON:-python3} -m pytest -q python) || status=1
exit $status
