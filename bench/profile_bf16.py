"""Runs one normal BF16 GEMM shape a few times, for a profiler to attach to:

    PYTHONPATH=python DGEMM_RUNTIME_LIB=... DGEMM_KERNEL_DIR=... \\
        ncu --set full -k regex:dgemm --launch-skip 2 --launch-count 1 \\
        python3 bench/profile_bf16.py M:N:K [CALLS] [LAYOUT]

d = a @ b^T (layout nt) with a [M, K], b [N, K], d [M, N] BF16, on random operands;
LAYOUT is nt (default), nn, tn or tt, as bench/bench_bf16.py builds them. With
DGEMM_PROFILE_PEER=torch the calls run torch.matmul instead (ncu -k regex:. then)."""
import os
import sys

import torch

import dgemm


def main():
    m, n, k = (int(v) for v in sys.argv[1].split(":"))
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    layout = sys.argv[3] if len(sys.argv) > 3 else "nt"
    bf = torch.bfloat16
    a = torch.randn(m, k, device="cuda", dtype=bf)
    b = torch.randn(n, k, device="cuda", dtype=bf)
    if layout[0] == "t":
        a = a.t().contiguous().t()
    if layout[1] == "n":
        b = b.t().contiguous().t()
    d = torch.empty(m, n, device="cuda", dtype=bf)
    fn = getattr(dgemm, f"bf16_gemm_{layout}")
    # bf16_gemm_nn takes b as [K, N], _tn a as [K, M]: the transposed views.
    a_arg = a.t() if layout[0] == "t" else a
    b_arg = b.t() if layout[1] == "n" else b
    for _ in range(calls):
        if os.environ.get("DGEMM_PROFILE_PEER") == "torch":
            torch.matmul(a, b.t(), out=d)
        else:
            fn(a_arg, b_arg, d)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
