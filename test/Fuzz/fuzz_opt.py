#!/usr/bin/env python3
"""Seeded random-mutation fuzzer for dgemm-opt's parser, op verifiers and
dgemm-verify-sync.

Takes seed inputs (the splits of the lit tests under test/Dialect/DGemm and,
optionally, synchronized candidate kernels), mutates one at a time (byte
flips, token swaps, integers replaced with boundary values, line deletions
and duplications, several mutations stacked) and runs
`dgemm-opt --dgemm-verify-sync` on each. Rejecting an input is fine (exit 1
with a diagnostic); a crash (a signal, an exit code other than 0 or 1, "LLVM
ERROR", "PLEASE submit a bug report", an assertion) or a hang (past the
timeout) fails the run. Every failing input is written to --crash-dir so it
can become a regression test (test/Dialect/DGemm/fuzz-regressions/).

The run is bounded by --seconds and reproducible from --seed (printed): the
same seed gives the same sequence of inputs.
"""

import argparse
import glob
import os
import random
import re
import subprocess
import sys
import time

BOUNDARY = ["0", "-1", "1", "2", "-2147483648", "2147483647", "2147483648", "4294967295",
            "4294967296", "9223372036854775807", "-9223372036854775808",
            "18446744073709551615", "99999999999999999999999", "65536", "255", "256", "128",
            "1024", "3", "7"]
INT = re.compile(r"(?<![\w%#@.])-?\d+(?![\w.])")
TOKEN = re.compile(r"[%#@^]?[\w.]+|[^\s\w]")
CRASH_TEXT = ("PLEASE submit a bug report", "LLVM ERROR", "Assertion", "Stack dump",
              "UNREACHABLE")


def seeds(paths):
    out = []
    for path in paths:
        with open(path, errors="replace") as f:
            text = f.read()
        for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
            if "dgemm." in chunk:
                out.append(chunk)
    return out


def mutate(rng, text):
    kind = rng.randrange(7)
    if kind == 0:  # integer -> boundary value
        ints = list(INT.finditer(text))
        if ints:
            m = rng.choice(ints)
            return text[:m.start()] + rng.choice(BOUNDARY) + text[m.end():]
    if kind == 1:  # swap two tokens
        toks = list(TOKEN.finditer(text))
        if len(toks) > 1:
            a, b = sorted(rng.sample(toks, 2), key=lambda m: m.start())
            return (text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() +
                    text[b.end():])
    if kind == 2:  # delete a line
        lines = text.splitlines(keepends=True)
        if lines:
            del lines[rng.randrange(len(lines))]
            return "".join(lines)
    if kind == 3:  # duplicate a line (elsewhere too)
        lines = text.splitlines(keepends=True)
        if lines:
            line = lines[rng.randrange(len(lines))]
            lines.insert(rng.randrange(len(lines) + 1), line)
            return "".join(lines)
    if kind == 4:  # replace a token with another token of the input
        toks = list(TOKEN.finditer(text))
        if toks:
            a, b = rng.choice(toks), rng.choice(toks)
            return text[:a.start()] + b.group() + text[a.end():]
    if kind == 5:  # byte flip
        if text:
            data = bytearray(text.encode())
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
            return data.decode(errors="replace")
    # delete a token
    toks = list(TOKEN.finditer(text))
    if toks:
        a = rng.choice(toks)
        return text[:a.start()] + text[a.end():]
    return text


def run(opt, path, timeout, split=False):
    cmd = [opt, "--dgemm-verify-sync", "-o", os.devnull, path]
    if split:
        cmd.insert(1, "--split-input-file")
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang (over %gs)" % timeout
    if p.returncode < 0:
        return "signal %d" % -p.returncode
    if p.returncode not in (0, 1):
        return "exit code %d" % p.returncode
    for t in CRASH_TEXT:
        if t in p.stderr:
            return "'%s' in the output" % t
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--opt", required=True, help="the dgemm-opt to fuzz")
    ap.add_argument("--inputs", nargs="+", required=True,
                    help="seed files or globs (split at '// -----')")
    ap.add_argument("--translate", help="with --description: dgemm-translate, whose "
                    "synchronized candidate kernels join the seeds")
    ap.add_argument("--description", help="a module with a dgemm.gemm")
    ap.add_argument("--seed", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--max-runs", type=int, default=0, help="stop after this many (0: no limit)")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per input")
    ap.add_argument("--batch", type=int, default=50, help="inputs per dgemm-opt process")
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--crash-dir", required=True)
    args = ap.parse_args()

    paths = sorted(p for g in args.inputs for p in glob.glob(g))
    corpus = seeds(paths)
    if args.translate and args.description:
        out = subprocess.run([args.translate, "--dgemm-synced-candidates", args.description],
                             capture_output=True, text=True, timeout=600)
        if out.returncode != 0:
            sys.exit("dgemm-translate failed:\n" + out.stderr)
        corpus += [k for k in out.stdout.split("// -----\n") if k.strip()]
    if not corpus:
        sys.exit("no seed inputs in %s" % " ".join(args.inputs))
    print("seed %d, %d seed inputs from %d files, %gs" % (args.seed, len(corpus), len(paths),
                                                          args.seconds))
    sys.stdout.flush()
    rng = random.Random(args.seed)
    os.makedirs(args.work_dir, exist_ok=True)
    path = os.path.join(args.work_dir, "input.mlir")
    deadline = time.monotonic() + args.seconds
    runs, crashes = 0, []
    # Inputs run in batches of --batch splits of one process; a batch that
    # fails is rerun one input at a time to find the culprits.
    while time.monotonic() < deadline and (not args.max_runs or runs < args.max_runs):
        batch = []
        for _ in range(args.batch):
            text = rng.choice(corpus)
            for _ in range(1 + int(rng.expovariate(1.0))):
                text = mutate(rng, text)
            # A mutant must stay one split.
            batch.append(text.replace("// -----", "// ----"))
        with open(path, "w") as f:
            f.write("\n// -----\n".join(batch))
        runs += len(batch)
        if not run(args.opt, path, args.timeout, split=True):
            continue
        for i, text in enumerate(batch):
            with open(path, "w") as f:
                f.write(text)
            why = run(args.opt, path, args.timeout)
            if not why:
                continue
            os.makedirs(args.crash_dir, exist_ok=True)
            saved = os.path.join(args.crash_dir, "crash-%d-%d.mlir" %
                                 (args.seed, runs - len(batch) + i + 1))
            with open(saved, "w") as f:
                f.write(text)
            crashes.append((why, saved))
            print("CRASH (%s): input saved to %s" % (why, saved))
            sys.stdout.flush()
    print("seed %d: %d inputs run, %d crashes or hangs" % (args.seed, runs, len(crashes)))
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
