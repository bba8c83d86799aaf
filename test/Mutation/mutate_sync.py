#!/usr/bin/env python3
"""Mutation suite for dgemm-verify-sync.

For every configuration the heuristics can choose (dgemm-translate
--dgemm-synced-candidates: every tile with and without B multicast, the
reduction, in-place and parked epilogues, the three-warpgroup tiles,
quad-ordered B), with one and with two descriptor slots, takes the kernel IR
after dgemm-place-sync, checks that dgemm-verify-sync accepts it, then deletes
in turn each synchronization operation (dgemm.wait, dgemm.arrive,
dgemm.mma.wait, dgemm.proxy.fence, dgemm.desc.drain, dgemm.desc.publish) and
each dgemm.turn, and requires dgemm-verify-sync to reject every such mutant.
No sampling: every deletion of every kernel. The mutants of a batch run in one
dgemm-opt process (--split-input-file), so the suite takes seconds.
"""

import argparse
import re
import subprocess
import sys
import tempfile
import os

SYNC_OP = re.compile(
    r"^\s*dgemm\.(wait|arrive|mma\.wait|proxy\.fence|desc\.drain|desc\.publish|turn)\b")
SPLIT = "// -----\n"
BATCH = 400


def synced_kernels(translate, description, variant):
    out = subprocess.run([translate, "--dgemm-synced-candidates", description] + variant,
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit("dgemm-translate %s failed:\n%s" % (" ".join(variant), out.stderr))
    return [k for k in out.stdout.split(SPLIT) if k.strip()]


def placed_kernels(opt, path):
    """The kernels of `path` (hand-written, without synchronization, split by
    `// -----`) after dgemm-place-sync."""
    out = subprocess.run([opt, "--split-input-file", "--dgemm-place-sync", path],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit("dgemm-opt --dgemm-place-sync failed on %s:\n%s" % (path, out.stderr))
    return [k for k in out.stdout.split(SPLIT) if k.strip()]


def entry_name(kernel):
    m = re.search(r"dgemm\.kernel @(\w+)", kernel)
    return m.group(1) if m else "?"


def rejected_splits(opt, chunks, workdir):
    """Indices of `chunks` that dgemm-opt --dgemm-verify-sync rejects."""
    path = os.path.join(workdir, "batch.mlir")
    starts, line = [], 1
    with open(path, "w") as f:
        for i, chunk in enumerate(chunks):
            if i:
                f.write(SPLIT)
                line += 1
            starts.append(line)
            f.write(chunk)
            line += chunk.count("\n")
    out = subprocess.run([opt, "--split-input-file", "--dgemm-verify-sync", "-o", os.devnull,
                          path], capture_output=True, text=True, timeout=600)
    if out.returncode not in (0, 1) or "PLEASE submit a bug report" in out.stderr:
        sys.exit("dgemm-opt crashed (exit %d) on %s:\n%s" % (out.returncode, path,
                                                            out.stderr[-4000:]))
    # Diagnostics carry the line in the whole file: each error belongs to the
    # split that holds its line.
    rejected = set()
    for m in re.finditer(r"^%s:(\d+):\d+: error:" % re.escape(path), out.stderr, re.M):
        line = int(m.group(1))
        rejected.add(max(i for i, s in enumerate(starts) if s <= line))
    if out.returncode != 0 and not rejected:
        sys.exit("dgemm-opt failed without a located error:\n" + out.stderr[-4000:])
    return rejected


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--opt", required=True, help="dgemm-opt")
    ap.add_argument("--translate", required=True, help="dgemm-translate")
    ap.add_argument("--description",
                    help="a module with a dgemm.gemm (examples/seed_wgrad.mlir)")
    ap.add_argument("--kernels",
                    help="hand-written kernels without synchronization, split "
                         "by '// -----' (schedules no description builds yet, "
                         "such as the chained accumulator): placed by "
                         "dgemm-place-sync, then mutated")
    ap.add_argument("--no-slot-variants", action="store_true",
                    help="build the candidates once, without the one- and "
                         "two-slot variants (kinds that rewrite no descriptor)")
    args = ap.parse_args()

    if bool(args.description) == bool(args.kernels):
        sys.exit("give one of --description and --kernels")
    kernels, seen = [], set()
    variants = ([[]] if args.no_slot_variants
                else [["--desc-slots=1"], ["--desc-slots=2"]])
    for variant in variants:
        made = (placed_kernels(args.opt, args.kernels) if args.kernels else
                synced_kernels(args.translate, args.description, variant))
        for k in made:
            if k not in seen:
                seen.add(k)
                kernels.append(k)
    if not kernels:
        sys.exit("no candidate kernels")
    print("%d synchronized candidate kernels" % len(kernels))

    with tempfile.TemporaryDirectory() as workdir:
        # The unmutated kernels must pass, or a killed mutant proves nothing.
        bad = rejected_splits(args.opt, kernels, workdir)
        if bad:
            sys.exit("dgemm-verify-sync rejects unmutated kernels: %s" %
                     ", ".join(entry_name(kernels[i]) for i in sorted(bad)))
        mutants = []  # (kernel index, deleted line number, line text, text)
        for ki, kernel in enumerate(kernels):
            lines = kernel.splitlines(keepends=True)
            for li, text in enumerate(lines):
                if SYNC_OP.match(text):
                    mutants.append((ki, li + 1, text.strip(),
                                    "".join(lines[:li] + lines[li + 1:])))
        survivors = []
        for b in range(0, len(mutants), BATCH):
            batch = mutants[b:b + BATCH]
            killed = rejected_splits(args.opt, [m[3] for m in batch], workdir)
            survivors += [m for i, m in enumerate(batch) if i not in killed]
    made, kills = len(mutants), len(mutants) - len(survivors)
    print("%d mutants made, %d killed" % (made, kills))
    for ki, line, text, _ in survivors:
        print("SURVIVED: %s: deleting line %d '%s'" % (entry_name(kernels[ki]), line, text))
    return 1 if survivors or made == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
