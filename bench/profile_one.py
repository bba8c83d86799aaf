"""Runs one k-grouped shape a few times, for a profiler to attach to:

    PYTHONPATH=python DGEMM_RUNTIME_LIB=... DGEMM_KERNEL_DIR=... \
        ncu --set full -k regex:dgemm --launch-skip 2 --launch-count 1 \
        python3 bench/profile_one.py G:M:N:K [CALLS]

K is the per-group token count (all groups equal)."""
import sys

import torch

import dgemm


def main():
    g, m, n, k = (int(v) for v in sys.argv[1].split(":"))
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    ks = [k] * g
    torch.manual_seed(0)
    a = dgemm.make_k_grouped_operand(
        torch.randn(sum(ks), m, device="cuda", dtype=torch.bfloat16), ks)
    b = dgemm.make_k_grouped_operand(
        torch.randn(sum(ks), n, device="cuda", dtype=torch.bfloat16), ks)
    kt = torch.tensor(ks, dtype=torch.int32, device="cuda")
    c = torch.randn(g, m, n, device="cuda", dtype=torch.float32)
    d = torch.empty_like(c)
    for _ in range(calls):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
