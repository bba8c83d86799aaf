"""Assembles every PTX file given (files or bundle directories) with
`ptxas -arch=sm_90a -v` and reports registers, spills, stack and shared memory
per kernel. Exits non-zero if ptxas fails or a kernel spills or uses a stack
frame."""
import os
import re
import subprocess
import sys
import tempfile


def ptx_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                if name.endswith(".ptx"):
                    yield os.path.join(p, name)
        else:
            yield p


def main():
    ptxas, paths = sys.argv[1], sys.argv[2:]
    count, bad = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for ptx in ptx_files(paths):
            out = subprocess.run(
                [ptxas, "-arch=sm_90a", "-v", ptx, "-o",
                 os.path.join(tmp, "k.cubin")],
                capture_output=True, text=True)
            log = out.stdout + out.stderr
            name = os.path.basename(ptx)
            if out.returncode != 0:
                print(f"FAIL {name}: ptxas exited {out.returncode}\n{log}")
                bad += 1
                continue
            regs = re.search(r"Used (\d+) registers", log)
            stack = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill "
                              r"stores, (\d+) bytes spill loads", log)
            frame, st, ld = (int(x) for x in stack.groups()) if stack else (0, 0, 0)
            warn = [l for l in log.splitlines() if "warning" in l.lower()]
            print(f"{name}: registers={regs.group(1) if regs else '?'} "
                  f"stack={frame} spill_stores={st} spill_loads={ld}")
            for w in warn:
                print(f"  {w}")
            if frame or st or ld:
                print(f"FAIL {name}: spills or stack frame")
                bad += 1
            count += 1
    print(f"assembled {count} kernels, {bad} with spills or stack")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
