#!/usr/bin/env python3
"""Cold first-call latency and per-call host overhead of the Python entry point (issue 39).

    CUDA_CACHE_DISABLE=1 python3 bench/first_call.py [--bundle DIR] [--calls N]

Each measurement of the first call runs in a fresh process (the runtime's module cache and the
CUDA context are per process; ``CUDA_CACHE_DISABLE=1`` keeps the driver's JIT cache out, so a
PTX-only bundle pays its JIT every time). Printed, per process, in milliseconds:

- ``import``: ``import torch, dgemm`` and ``torch.cuda.init()`` (the context is created here,
  not charged to the first call);
- ``first``: the first GEMM call (the seed shape, in place), host time until
  ``torch.cuda.synchronize()`` returns: bundle index check, .meta, cubin load or PTX JIT,
  tensor maps, launch and the kernel;
- ``second``: the same call again, the same way (the kernel is loaded).

Then, in this process, the host time per call of N back-to-back calls without synchronizing
(a small shape, so the GPU keeps up): through ``dgemm.k_grouped_fp8_gemm_nt_contiguous`` (the
wrapper and the torch custom op), through ``torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous``
directly, and through the ctypes launch alone (``dgemm._runtime.launch``, no checks in Python,
no op dispatch) with a workspace allocated once: the differences are the wrapper's and the
op's overheads; then two parts of the op's body alone (the workspace-size query, entering the
device context) and a cProfile of the op's Python functions by own time.

``--m-grouped`` adds the first call of ``m_grouped_fp8_gemm_nt_contiguous`` (4 experts of 512
rows, N 4096, K 7168) in fresh processes, dgemm's and, where ``deep_gemm`` imports, DeepGEMM's on
the same operands, each DeepGEMM process with an empty JIT cache (``DG_JIT_CACHE_DIR`` set to a
new directory), so its first call includes the NVCC compilation a new user waits for.

The bundle is ``--bundle`` (passed as ``DGEMM_KERNEL_DIR``), else whatever the package uses.
To compare cubins with PTX JIT, run it on a bundle and on a copy written with ``--ptxas=none``.
"""

import argparse
import json
import os
import subprocess
import sys
import time

_CHILD = r"""
import json, time
t0 = time.perf_counter()
import torch, dgemm
torch.cuda.init()
torch.empty(1, device="cuda")
t1 = time.perf_counter()
ks = [256, 128, 128, 256]
m = n = 2048
a = dgemm.make_k_grouped_operand(torch.randn(sum(ks), m, device="cuda", dtype=torch.bfloat16), ks)
b = dgemm.make_k_grouped_operand(torch.randn(sum(ks), n, device="cuda", dtype=torch.bfloat16), ks)
d = torch.zeros(len(ks), m, n, device="cuda")
kt = torch.tensor(ks, dtype=torch.int32, device="cuda")
torch.cuda.synchronize()
times = []
for _ in range(2):
    s = time.perf_counter()
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c=d)
    torch.cuda.synchronize()
    times.append(time.perf_counter() - s)
info = dgemm.check_kernel_bundle()
print(json.dumps({"import": (t1 - t0) * 1e3, "first": times[0] * 1e3, "second": times[1] * 1e3,
                  "bundle": info["dir"], "cubins": info["cubins"], "kernels": info["kernels"]}))
"""

_CHILD_M_GROUPED = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
lib = sys.argv[1]
if lib == "dgemm":
    import dgemm as mod
else:
    import deep_gemm as mod
    import dgemm
torch.cuda.init()
torch.empty(1, device="cuda")
t1 = time.perf_counter()
import dgemm
g, rows, n, k = 4, 512, 4096, 7168
layout = torch.arange(g, device="cuda", dtype=torch.int32).repeat_interleave(rows)
a = dgemm.per_token_cast_to_fp8(torch.randn(g * rows, k, device="cuda", dtype=torch.bfloat16))
w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
w8, sfb = zip(*map(dgemm.per_block_cast_to_fp8, w))
b = (torch.stack(w8), torch.stack(sfb))
if lib == "dgemm":
    a = (a[0], dgemm.get_mn_major_tma_aligned_tensor(a[1]))
d = torch.empty(g * rows, n, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
kw = {} if lib == "dgemm" else {"disable_ue8m0_cast": True}
times = []
for _ in range(2):
    s = time.perf_counter()
    mod.m_grouped_fp8_gemm_nt_contiguous(a, b, d, layout, **kw)
    torch.cuda.synchronize()
    times.append(time.perf_counter() - s)
print(json.dumps({"import": (t1 - t0) * 1e3, "first": times[0] * 1e3, "second": times[1] * 1e3}))
"""


def first_m_grouped(env, processes):
    import tempfile
    for lib in ("dgemm", "deep_gemm"):
        for i in range(processes):
            e = dict(env)
            if lib == "deep_gemm":
                e["DG_JIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="dg-jit-")
            out = subprocess.run([sys.executable, "-c", _CHILD_M_GROUPED, lib], env=e,
                                 capture_output=True, text=True, timeout=600)
            if out.returncode != 0:
                print(f"m-grouped first call, {lib}: failed\n{out.stderr[-2000:]}")
                break
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"m-grouped, {lib}, process {i}: import {r['import']:.0f} ms, first call "
                  f"{r['first']:.1f} ms, second {r['second']:.2f} ms")


def per_call(calls):
    import torch
    import dgemm
    from dgemm import _runtime

    ks = [128, 128]
    m = n = 128
    a = dgemm.make_k_grouped_operand(torch.randn(sum(ks), m, device="cuda",
                                                 dtype=torch.bfloat16), ks)
    b = dgemm.make_k_grouped_operand(torch.randn(sum(ks), n, device="cuda",
                                                 dtype=torch.bfloat16), ks)
    d = torch.zeros(len(ks), m, n, device="cuda")
    kt = torch.tensor(ks, dtype=torch.int32, device="cuda")
    dgemm.k_grouped_fp8_gemm_nt_contiguous  # imports the module that defines the op
    op = torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous
    ws_bytes = _runtime.workspace_bytes(m, n, ks)
    ws = torch.empty(max(ws_bytes, 1), dtype=torch.uint8, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    ptrs = (a[0].data_ptr(), a[1].data_ptr(), b[0].data_ptr(), b[1].data_ptr(), d.data_ptr(),
            d.data_ptr())

    variants = {
        "wrapper": lambda: dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c=d),
        "op": lambda: op(a[0], a[1], b[0], b[1], d, ks, kt, None, True),
        "ctypes": lambda: _runtime.launch(*ptrs, m, n, ks, kt.data_ptr(), ws.data_ptr(),
                                          ws_bytes, stream),
        # Parts of the op's body alone.
        "workspace_bytes": lambda: _runtime.workspace_bytes(m, n, ks),
        "device_context": lambda: torch.cuda.device(d.device).__enter__(),
    }
    out = {}
    for name, fn in variants.items():
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        s = time.perf_counter()
        for _ in range(calls):
            fn()
        host = (time.perf_counter() - s) / calls
        torch.cuda.synchronize()
        out[name] = host * 1e6
    # Where the op's host time goes: its Python functions by own time.
    import cProfile
    import io
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(min(calls, 500)):
        variants["op"]()
    prof.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(15)
    print("cProfile of the op, by own time:\n" + text.getvalue())
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bundle", help="kernel bundle (DGEMM_KERNEL_DIR)")
    p.add_argument("--processes", type=int, default=3, help="fresh processes for the first call")
    p.add_argument("--calls", type=int, default=2000, help="calls per variant for the overhead")
    p.add_argument("--m-grouped", action="store_true",
                   help="also the m-grouped first call, dgemm's and DeepGEMM's")
    args = p.parse_args()
    env = dict(os.environ)
    if args.bundle:
        env["DGEMM_KERNEL_DIR"] = args.bundle
    print(f"CUDA_CACHE_DISABLE={env.get('CUDA_CACHE_DISABLE', '(unset)')}")
    for i in range(args.processes):
        out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                             text=True, timeout=600)
        if out.returncode != 0:
            print(out.stderr[-4000:], file=sys.stderr)
            sys.exit(1)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"process {i}: import {r['import']:.0f} ms, first call {r['first']:.1f} ms, "
              f"second {r['second']:.2f} ms ({r['kernels']} kernels, {r['cubins']} cubins in "
              f"{r['bundle']})")
    if args.m_grouped:
        first_m_grouped(env, args.processes)
    if args.bundle:
        os.environ["DGEMM_KERNEL_DIR"] = args.bundle
    o = per_call(args.calls)
    print("host time per call, us: " + ", ".join(f"{k} {v:.1f}" for k, v in o.items()))


if __name__ == "__main__":
    main()
