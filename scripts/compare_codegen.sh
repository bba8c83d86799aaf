#!/usr/bin/env bash
# Byte-compares the kernels two dgemm-translate binaries generate (no GPU
# needed): every candidate of the default bundle and of the one-slot bundle,
# the seed's own kernel with each, and the race demonstration's kernel (equal
# but for its entry name, when OLD spelled the option --unsafe-skip-...).
#   scripts/compare_codegen.sh OLD_DGEMM_TRANSLATE NEW_DGEMM_TRANSLATE [WORKDIR]
# Exits 0 when everything is identical. Used to show that a restructure left
# the kernels unchanged (bench/RESULTS.md, 2026-12-07).
set -u -o pipefail
old=${1:?old dgemm-translate}
new=${2:?new dgemm-translate}
work=${3:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
src="$root/examples/seed_wgrad.mlir"
status=0
gen() { # gen BIN OUT EXTRA...
  local bin=$1 out=$2; shift 2
  mkdir -p "$out"
  "$bin" --dgemm-to-ptx "$src" "$@" -o "$out-seed.ptx"
}
for side in old new; do
  bin=$old; [ "$side" = new ] && bin=$new
  gen "$bin" "$work/$side/bundle" --bundle-dir="$work/$side/bundle" --bundle-all-candidates || exit 2
  gen "$bin" "$work/$side/r1" --desc-slots=1 --bundle-dir="$work/$side/r1" --bundle-all-candidates || exit 2
  if "$bin" --help 2>/dev/null | grep -q -- '--unsafe='; then
    gen "$bin" "$work/$side/race" --desc-slots=1 --unsafe=skip_descriptor_drain || exit 2
  else
    gen "$bin" "$work/$side/race" --desc-slots=1 --unsafe-skip-descriptor-drain || exit 2
  fi
done
for d in bundle r1; do
  n=0; bad=0
  for f in "$work/old/$d"/*.ptx; do
    n=$((n + 1))
    if ! cmp -s "$f" "$work/new/$d/$(basename "$f")"; then
      bad=$((bad + 1)); echo "differs: $d/$(basename "$f")"
    fi
  done
  extra=$(comm -13 <(cd "$work/old/$d" && ls) <(cd "$work/new/$d" && ls) | grep -c '\.ptx$')
  echo "$d: $n kernels compared, $bad differ, $extra only in the new bundle"
  [ "$bad" = 0 ] && [ "$extra" = 0 ] || status=1
  if ! cmp -s "$work/old/$d-seed.ptx" "$work/new/$d-seed.ptx"; then
    echo "differs: the seed's own kernel ($d)"; status=1
  fi
done
if cmp -s <(sed 's/_unsafe_nodrain//g' "$work/new/race-seed.ptx") \
          <(sed 's/_unsafe_nodrain//g' "$work/old/race-seed.ptx"); then
  echo "race demonstration: identical but for the entry name"
else
  echo "race demonstration: differs"; status=1
fi
exit $status
