#!/usr/bin/env python3
"""Shared-memory wavefronts per opcode, from an Nsight Compute source page in CSV.

    scripts/ncu_wavefronts.py NAME-sass.csv [--blocks N]

The CSV is what `scripts/device_profile.sh` writes (`ncu -i REP --page source --print-source
sass --csv`). Every column whose name mentions wavefronts or shared memory is summed per
opcode over its numeric cells (the SASS mnemonic without predicate and modifiers) and printed with its
share of the column's total; executed instructions are summed beside them. With --blocks N
each sum is also divided by N (for instance the number of 128-deep K blocks per CTA, to get
wavefronts per block). The TMA unit's writes into shared memory are not instructions of the
CTA and do not appear here.
"""
import argparse
import csv
import re
import sys
from collections import defaultdict


def opcode(source):
    text = source.strip()
    text = re.sub(r"^@!?U?P[T0-9]+\s+", "", text)
    mnemonic = text.split(" ", 1)[0] if text else ""
    return mnemonic.split(".", 1)[0]


def number(cell):
    cell = cell.strip().replace(",", "")
    if not cell or cell == "-":
        return None
    try:
        return float(cell)
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv_path")
    parser.add_argument("--blocks", type=float, default=0.0)
    args = parser.parse_args()
    with open(args.csv_path, newline="") as handle:
        rows = list(csv.reader(handle))
    header_index = next((i for i, row in enumerate(rows) if "Source" in row), None)
    if header_index is None:
        sys.exit(f"{args.csv_path}: no header row with a 'Source' column")
    header = rows[header_index]
    source_col = header.index("Source")
    wanted = [i for i, name in enumerate(header)
              if re.search(r"wavefront|shared", name, re.IGNORECASE)]
    executed = next((i for i, name in enumerate(header) if name == "Instructions Executed"), None)
    if executed is not None:
        wanted = [executed] + [i for i in wanted if i != executed]
    sums = defaultdict(lambda: defaultdict(float))
    for row in rows[header_index + 1:]:
        if len(row) <= source_col:
            continue
        op = opcode(row[source_col])
        for i in wanted:
            value = number(row[i]) if i < len(row) else None
            if value is not None:  # "-" and text cells are not counts
                sums[i][op] += value
    for i in wanted:
        total = sum(sums[i].values())
        if total <= 0:
            continue
        print(f"== {header[i]}: total {total:.4g}"
              + (f", per block {total / args.blocks:.4g}" if args.blocks else ""))
        for op, value in sorted(sums[i].items(), key=lambda kv: -kv[1])[:12]:
            if value <= 0:
                continue
            per_block = f"  per block {value / args.blocks:10.4g}" if args.blocks else ""
            print(f"  {op:<12} {value:14.4g}  {100 * value / total:5.1f}%{per_block}")


if __name__ == "__main__":
    main()
