#!/usr/bin/env python3
"""The SASS of generated kernels, block loop by block loop: the last lowering stage, after ptxas.

    scripts/sass_report.py PATH... [--ptxas PTXAS] [--cuobjdump CUOBJDUMP] [--check] [--list]

PATH: PTX files, bundle directories (every *.ptx in them), or objects cuobjdump reads (.cubin,
.so, executables: the kernels of bench/peers/deepgemm_kgrouped.cu, for instance). PTX is
assembled with `ptxas -arch=sm_90a -O3`. cuobjdump is looked up on PATH, in /usr/local/cuda/bin
and in the `nvidia-cuda-cuobjdump` wheel. cuobjdump runs nvdisasm, which must be on PATH or
beside it; the `nvidia-cuda-nvdisasm` wheel installs it there (`pip install
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`; both run on a machine without a GPU).

A block loop is the innermost loop (a backward branch and its body) that issues WGMMAs
(`QGMMA`/`HGMMA`). Per block loop it prints the instruction count and mix: WGMMAs and their
shape, shared-memory loads, FMUL/FFMA, uniform-datapath instructions, and:
- `early_fmul`: FMULs issued before the WGMMA wait (`WARPGROUP.DEPBAR`), that is, scale
  products computed while the tensor cores work;
- `release`: how each mbarrier arrive in the loop (`SYNCS.ARRIVE*`, the stage release) is
  ordered after the shared-memory loads that precede it in the loop: `fence` (a `MEMBAR` and
  `FENCE.VIEW.ASYNC` between the last such load and the arrive, docs/Synchronization.md),
  `no-fence`, or `no-loads` (the loop loads nothing from shared memory). When no load
  precedes the arrive in the body, the nearest one before it is found across the back edge
  (the previous iteration's);
- `handover`: for loops with a named-barrier arrive (`BAR.ARV`, the math warpgroups' turn),
  `early` when it precedes the loop's first FFMA, `late` when ptxas sank it below promotion
  FFMAs (the other warpgroup then waits for the promotion; bench/NOTES.md section 10).

A loop is the address range from a backward branch's target to the branch, so a loop that
branches into another's middle overlaps it. --check exits 1 when a block loop has a `no-fence`
release (an arrive that may overtake the loads of the stage it releases). --list prints one line per kernel only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)([^;]*);")
FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
BRANCH_TARGET = re.compile(r"0x([0-9a-f]+)")


@dataclass
class Insn:
    addr: int
    op: str
    args: str


@dataclass
class Loop:
    start: int
    end: int
    insns: List[Insn] = field(default_factory=list)


def find_tool(name: str, given: Optional[str]) -> Optional[str]:
    """`given`, else `name` on PATH, else in /usr/local/cuda/bin."""
    if given:
        return given
    for cand in (shutil.which(name), f"/usr/local/cuda/bin/{name}"):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def has_nvdisasm(cuobjdump: str) -> bool:
    """cuobjdump runs nvdisasm, from PATH or beside it."""
    return bool(shutil.which("nvdisasm")) or Path(cuobjdump).with_name("nvdisasm").exists()


def find_cuobjdump(given: Optional[str]) -> Optional[str]:
    """`given`, else a cuobjdump with nvdisasm usable: on PATH, in /usr/local/cuda/bin, or
    from the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels (site-packages/nvidia/
    cu*/bin). The one lookup for this script, test/lit.cfg.py and scripts/install-deps.sh."""
    if given:
        return given
    found = find_tool("cuobjdump", None)
    if found and has_nvdisasm(found):
        return found
    try:
        import nvidia  # type: ignore
    except ImportError:
        return None
    for base in getattr(nvidia, "__path__", []):
        for cand in sorted(Path(base).glob("cu*/bin/cuobjdump")):
            if os.access(cand, os.X_OK) and has_nvdisasm(str(cand)):
                return str(cand)
    return None


def inputs(paths: List[str]) -> Iterator[Path]:
    for p in map(Path, paths):
        if p.is_dir():
            yield from sorted(p.glob("*.ptx"))
        else:
            yield p


def functions(sass: str) -> Dict[str, List[Insn]]:
    out: Dict[str, List[Insn]] = {}
    current: Optional[List[Insn]] = None
    for line in sass.splitlines():
        m = FUNC.match(line)
        if m:
            current = out.setdefault(m.group(1), [])
            continue
        m = LINE.match(line)
        if m and current is not None:
            current.append(Insn(int(m.group(1), 16), m.group(3), m.group(4)))
    return out


def block_loops(insns: List[Insn]) -> List[Loop]:
    """Innermost backward-branch loops that issue WGMMAs."""
    loops = []
    for i in insns:
        if i.op.startswith("BRA"):
            t = BRANCH_TARGET.search(i.args)
            if t and int(t.group(1), 16) < i.addr:
                body = [x for x in insns if int(t.group(1), 16) <= x.addr <= i.addr]
                if any(x.op.startswith(("QGMMA", "HGMMA")) for x in body):
                    loops.append(Loop(int(t.group(1), 16), i.addr, body))
    # Keep the innermost: drop a loop that contains another WGMMA loop.
    return [lp for lp in loops
            if not any(o is not lp and lp.start <= o.start and o.end <= lp.end and
                       (o.start, o.end) != (lp.start, lp.end) for o in loops)]


def analyse(loop: Loop) -> Dict[str, str]:
    ops = [i.op for i in loop.insns]
    mma = [op for op in ops if op.startswith(("QGMMA", "HGMMA"))]
    lds = sum(op.startswith("LDS") for op in ops)
    fmul = sum(op == "FMUL" for op in ops)
    ffma = sum(op == "FFMA" for op in ops)
    uni = sum(op.startswith("U") for op in ops)
    depbar = next((k for k, op in enumerate(ops) if op.startswith("WARPGROUP.DEPBAR")), None)
    early = sum(op == "FMUL" for op in ops[:depbar]) if depbar is not None else 0
    releases = []
    for k, op in enumerate(ops):
        if not op.startswith("SYNCS.ARRIVE"):
            continue
        if not lds:
            releases.append("no-loads")
            continue
        # The nearest load before the arrive, going round the back edge if none precedes it
        # in the body (a release of the stage whose scales the previous iteration loaded).
        last_load = max((j for j in range(k) if ops[j].startswith("LDS")), default=None)
        if last_load is not None:
            between = ops[last_load + 1:k]
        else:
            last_load = max(j for j in range(len(ops)) if ops[j].startswith("LDS"))
            between = ops[last_load + 1:] + ops[:k]
        fenced = (any(o.startswith("MEMBAR") for o in between) and
                  any(o.startswith("FENCE.VIEW.ASYNC") for o in between))
        releases.append("fence" if fenced else "no-fence")
    handover = "-"
    arv = next((k for k, op in enumerate(ops) if op.startswith("BAR.ARV")), None)
    if arv is not None:
        first_ffma = next((k for k, op in enumerate(ops) if op == "FFMA"), None)
        handover = "early" if first_ffma is None or arv < first_ffma else "late"
    shape = sorted({op.split(".")[1] for op in mma if "." in op})
    return {
        "insns": str(len(ops)), "mma": f"{len(mma)}x{'/'.join(shape)}", "lds": str(lds),
        "fmul": str(fmul), "ffma": str(ffma), "uniform": str(uni), "early_fmul": str(early),
        "release": ",".join(releases) or "-", "handover": handover,
    }


def sass_of(path: Path, ptxas: Optional[str], cuobjdump: str, tmp: str) -> str:
    obj = path
    if path.suffix == ".ptx":
        if not ptxas:
            raise RuntimeError("no ptxas (give --ptxas)")
        obj = Path(tmp) / "k.cubin"
        r = subprocess.run([ptxas, "-arch=sm_90a", "-O3", str(path), "-o", str(obj)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"ptxas failed: {r.stderr.strip()[:300]}")
    env = dict(os.environ)
    sibling = Path(cuobjdump).with_name("nvdisasm")
    if "NVDISASM_PATH" not in env and not shutil.which("nvdisasm") and sibling.exists():
        env["NVDISASM_PATH"] = str(sibling.parent)
    r = subprocess.run([cuobjdump, "-sass", str(obj)], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"cuobjdump failed: {r.stderr.strip()[:300]}")
    return r.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--find-cuobjdump", action="store_true",
                        help="print the cuobjdump this script would use and exit (1 if none)")
    parser.add_argument("--ptxas")
    parser.add_argument("--cuobjdump")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a block loop releases a stage without the fence")
    parser.add_argument("--list", action="store_true", help="one line per kernel")
    args = parser.parse_args()
    cuobjdump = find_cuobjdump(args.cuobjdump)
    if args.find_cuobjdump:
        if cuobjdump:
            print(cuobjdump)
        return 0 if cuobjdump else 1
    if not args.paths:
        parser.error("give PTX files, bundle directories or objects")
    if not cuobjdump:
        print("no cuobjdump with nvdisasm: put them on PATH or `pip install "
              "nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`",
              file=sys.stderr)
        return 2
    ptxas = find_tool("ptxas", args.ptxas)
    kernels = unfenced = errors = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in inputs(args.paths):
            try:
                funcs = functions(sass_of(path, ptxas, cuobjdump, tmp))
            except RuntimeError as e:
                print(f"{path.name}: ERROR {e}")
                errors += 1
                continue
            for name, insns in funcs.items():
                loops = block_loops(insns)
                if not loops:
                    continue
                kernels += 1
                label = path.name if path.suffix == ".ptx" else f"{path.name}:{name}"
                infos = [analyse(lp) for lp in loops]
                bad = any("no-fence" in i["release"] for i in infos)
                unfenced += bad
                if args.list:
                    print(f"{label}: loops={len(loops)} "
                          + " | ".join(f"insns={i['insns']} release={i['release']} "
                                       f"handover={i['handover']}" for i in infos))
                    continue
                print(f"{label}")
                for lp, i in zip(loops, infos):
                    print(f"  loop 0x{lp.start:x}-0x{lp.end:x}: " +
                          " ".join(f"{k}={v}" for k, v in i.items()))
    print(f"{kernels} kernels with block loops; {unfenced} with a stage release not fenced "
          f"after its loads; {errors} errors")
    if errors:
        return 2
    return 1 if args.check and unfenced else 0


if __name__ == "__main__":
    sys.exit(main())
