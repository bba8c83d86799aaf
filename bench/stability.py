"""Bitwise stability probe: calls the k-grouped GEMM repeatedly on fixed
random inputs and counts results that differ from the first call, per shape.

    PYTHONPATH=python DGEMM_RUNTIME_LIB=... DGEMM_KERNEL_DIR=... \
        python3 bench/stability.py [CALLS] [G:M:N:K ...]

K is the per-group token count (all groups equal). Prints, per shape, how many
calls differed and the largest element difference, and where the first
differing element lies (group, row, column, tile coordinates for 128-row
tiles), which localizes a race to a tile, a warp or a column range."""
import sys

import torch

import dgemm


def probe(g, m, n, k, calls):
    ks = [k] * g
    torch.manual_seed(0)
    xa = torch.randn(sum(ks), m, device="cuda", dtype=torch.bfloat16)
    xb = torch.randn(sum(ks), n, device="cuda", dtype=torch.bfloat16)
    a = dgemm.make_k_grouped_operand(xa, ks)
    b = dgemm.make_k_grouped_operand(xb, ks)
    kt = torch.tensor(ks, dtype=torch.int32, device="cuda")
    c = torch.randn(g, m, n, device="cuda", dtype=torch.float32)
    d = torch.empty_like(c)
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c)
    first = d.clone()
    bad, worst, where = 0, 0.0, None
    for _ in range(calls):
        d.fill_(float("nan"))
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c)
        diff = (d - first).abs()
        if not torch.equal(d, first):
            bad += 1
            worst = max(worst, float(torch.nan_to_num(diff, nan=float("inf")).max()))
            if where is None:
                idx = torch.nonzero(torch.nan_to_num(diff, nan=1.0) > 0)
                gi, r, col = (int(v) for v in idx[0])
                where = (f"first at g={gi} row={r} col={col} (row%128={r % 128}, "
                         f"{len(idx)} elements, rows {int(idx[:, 1].min())}.."
                         f"{int(idx[:, 1].max())}, cols {int(idx[:, 2].min())}.."
                         f"{int(idx[:, 2].max())})")
    torch.cuda.synchronize()
    print(f"G={g} M={m} N={n} K={k}: {bad}/{calls} calls differ, max |diff| "
          f"{worst:.3e}" + (f"; {where}" if where else ""), flush=True)


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    shapes = sys.argv[2:] or ["1:7168:2048:8192", "4:7168:2048:8192",
                              "16:7168:2048:2048"]
    for s in shapes:
        probe(*(int(v) for v in s.split(":")), calls)


if __name__ == "__main__":
    main()
