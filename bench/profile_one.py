"""Runs one k-grouped shape a few times, for a profiler to attach to:

    PYTHONPATH=python DGEMM_RUNTIME_LIB=... DGEMM_KERNEL_DIR=... \
        ncu --set full -k regex:dgemm --launch-skip 2 --launch-count 1 \
        python3 bench/profile_one.py G:M:N:K [CALLS]

K is the per-group token count (all groups equal). With DGEMM_PROFILE_IN_PLACE=1 the calls
accumulate into c (d is c), as bench.py's do; otherwise d is a separate tensor. With
DGEMM_PROFILE_DEEPGEMM=LIBRARY the calls run DeepGEMM's own kernel instead, through bench.py's
peer library (scripts/build_deepgemm_peer.sh; in place only, and only for the groups, M and N
the library was built for); its kernel is named sm90_fp8_gemm_1d1d_impl (-k regex:sm90_fp8,
which scripts/device_profile.sh uses then)."""
import os
import sys

import torch

import dgemm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (DeepGemmPeer)
from race_probe import uniform_inputs  # noqa: E402


def main():
    g, m, n, k = (int(v) for v in sys.argv[1].split(":"))
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    ks = [k] * g
    a, b, kt, c = uniform_inputs(m, n, ks)
    peer_lib = os.environ.get("DGEMM_PROFILE_DEEPGEMM")
    if peer_lib:
        peer = bench.DeepGemmPeer(peer_lib)
        code, desc = peer.config(ks, m, n)
        print(f"DeepGEMM: {desc}", file=sys.stderr)
        if code != 1:
            sys.exit(f"DGEMM_PROFILE_DEEPGEMM: no DeepGEMM kernel for {sys.argv[1]} in {peer_lib}")
        stream = torch.cuda.current_stream().cuda_stream
        for _ in range(calls):
            peer.run(a, b, c, kt, ks, m, n, stream)
        torch.cuda.synchronize()
        return
    d = c if os.environ.get("DGEMM_PROFILE_IN_PLACE") == "1" else torch.empty_like(c)
    for _ in range(calls):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
