"""Runs one k-grouped shape a few times, for a profiler to attach to:

    PYTHONPATH=python DGEMM_RUNTIME_LIB=... DGEMM_KERNEL_DIR=... \
        ncu --set full -k regex:dgemm --launch-skip 2 --launch-count 1 \
        python3 bench/profile_one.py G:M:N:K [CALLS]

K is the per-group token count (all groups equal). With DGEMM_PROFILE_IN_PLACE=1 the calls
accumulate into c (d is c), as bench.py's do; otherwise d is a separate tensor."""
import os
import sys

import torch

import dgemm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from race_probe import uniform_inputs  # noqa: E402


def main():
    g, m, n, k = (int(v) for v in sys.argv[1].split(":"))
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    ks = [k] * g
    a, b, kt, c = uniform_inputs(m, n, ks)
    d = c if os.environ.get("DGEMM_PROFILE_IN_PLACE") == "1" else torch.empty_like(c)
    for _ in range(calls):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
