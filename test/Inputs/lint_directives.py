"""Fails on FileCheck/verify directives that silently check nothing: a prefix
followed by a space before the colon (`// CHECK :`), a misspelled suffix
(`CHECK-NXT:`), or an `expected-error` without `{{...}}`."""
import os
import re
import sys

PREFIX = r"(?:CHECK|[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*)"
SUFFIXES = {"", "-NEXT", "-SAME", "-NOT", "-DAG", "-LABEL", "-EMPTY", "-COUNT"}
SPACE_COLON = re.compile(r"^\s*(?://|#)?\s*(CHECK[A-Z0-9-]*)\s+:")
DIRECTIVE = re.compile(r"^\s*(?://)?\s*([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*):")
EXPECTED = re.compile(r"expected-(error|note|warning|remark)\b(?!.*\{\{)")


def check(path, prefixes):
    bad = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if SPACE_COLON.match(line):
                bad.append(f"{path}:{n}: space before ':' in a directive")
            m = DIRECTIVE.match(line)
            if m:
                word = m.group(1)
                for p in prefixes:
                    if word.startswith(p + "-"):
                        suffix = word[len(p):]
                        if suffix not in SUFFIXES and not re.fullmatch(r"-COUNT-\d+", suffix):
                            bad.append(f"{path}:{n}: unknown directive suffix '{word}'")
            if "//" in line and EXPECTED.search(line.split("//", 1)[1]):
                bad.append(f"{path}:{n}: expected-* without a {{{{message}}}}")
    return bad


def main():
    root = sys.argv[1]
    bad = []
    for dirpath, _, files in os.walk(root):
        if "Inputs" in dirpath.split(os.sep):
            continue
        for name in sorted(files):
            if not name.endswith((".mlir", ".test")):
                continue
            path = os.path.join(dirpath, name)
            text = open(path, encoding="utf-8").read()
            prefixes = {"CHECK"} | set(re.findall(r"--check-prefix[= ]([A-Z0-9-]+)", text))
            bad += check(path, prefixes)
    print("\n".join(bad) if bad else "directives ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
