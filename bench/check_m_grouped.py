"""GPU correctness of the m-grouped contiguous FP8 GEMM (run on the GPU machine).

    python bench/check_m_grouped.py [--small] [--repeats R]

Each case: fresh random operands, per-token / per-block FP8 casts, d poisoned
with NaN, one call compared with an FP32 reference of the dequantized
operands (TF32 off) by DeepGEMM's calc_diff (< 1e-3), padding rows checked
still poisoned, then R more calls on the same inputs compared bitwise, then
the same experts given by prefix sums (use_psum_layout=True: expert e's rows
start at the 128-row boundary after expert e-1's end, as in the per-row
layout) compared bitwise with the per-row layout's result, gaps included.
Prints one line per case and exits nonzero if any fails. --small runs the
cases small enough for compute-sanitizer.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import torch

import dgemm
from dgemm.testing import calc_diff

ALIGN = dgemm.get_mk_alignment_for_contiguous_layout()


def make_layout(tokens, device):
    """Per-row expert ids with each expert padded to ALIGN rows (-1)."""
    rows = []
    for e, t in enumerate(tokens):
        padded = (t + ALIGN - 1) // ALIGN * ALIGN
        rows += [e] * t + [-1] * (padded - t)
    if not rows:
        rows = [-1] * ALIGN
    return torch.tensor(rows, dtype=torch.int32, device=device)


def psum_of(tokens, device):
    """The prefix sums that put expert e's rows where make_layout puts them."""
    psum, start = [], 0
    for t in tokens:
        psum.append(start + t)
        start += (t + ALIGN - 1) // ALIGN * ALIGN
    return torch.tensor(psum, dtype=torch.int32, device=device)


def run_case(name, tokens, n, k, repeats, gen):
    dev = "cuda"
    g = len(tokens)
    layout = make_layout(tokens, dev)
    m = layout.numel()
    x = torch.randn((m, k), device=dev, generator=gen, dtype=torch.bfloat16)
    w = torch.randn((g, n, k), device=dev, generator=gen, dtype=torch.bfloat16)
    x_fp8, sfa = dgemm.per_token_cast_to_fp8(x)
    w_fp8 = torch.empty((g, n, k), device=dev, dtype=torch.float8_e4m3fn)
    sfb = torch.empty((g, (n + 127) // 128, k // 128), device=dev, dtype=torch.float32)
    for e in range(g):
        w_fp8[e], sfb[e] = dgemm.per_block_cast_to_fp8(w[e])
    d = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
    a, b = (x_fp8, sfa), (w_fp8, sfb)
    dgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, d, layout)
    torch.cuda.synchronize()
    ref = dgemm.m_grouped_reference(a, b, layout)
    valid = layout >= 0
    ok = True
    notes = []
    if valid.any():
        diff = calc_diff(d[valid].float(), ref[valid])
        notes.append(f"calc_diff={diff:.2e}")
        if not diff < 1e-3 or not torch.isfinite(d[valid].float()).all():
            ok = False
    if (~valid).any() and not torch.isnan(d[~valid].float()).all():
        ok = False
        notes.append("padding rows written")
    first = d.clone()
    for _ in range(repeats):
        d2 = torch.full_like(d, float("nan"))
        dgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, d2, layout, check_grouped_layout=False)
        if not torch.equal(d2.view(torch.int16), first.view(torch.int16)):
            ok = False
            notes.append("non-deterministic")
            break
    psum = psum_of(tokens, dev)
    if not torch.equal(dgemm.psum_to_grouped_layout(psum, m), layout):
        ok = False
        notes.append("psum_to_grouped_layout differs from the per-row layout")
    for i in range(max(1, repeats)):
        d3 = torch.full_like(d, float("nan"))
        dgemm.m_grouped_fp8_gemm_nt_contiguous(a, b, d3, psum, use_psum_layout=True,
                                               check_grouped_layout=(i == 0))
        if not torch.equal(d3.view(torch.int16), first.view(torch.int16)):
            ok = False
            notes.append("psum layout differs from the per-row layout")
            break
    torch.cuda.synchronize()
    print(f"{'PASS' if ok else 'FAIL'} {name}: G={g} M_sum={m} N={n} K={k} "
          f"tokens={tokens[:8]}{'...' if g > 8 else ''} {' '.join(notes)}", flush=True)
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--small", action="store_true")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int(time.time()))
    rng = torch.Generator().manual_seed(7)

    def lognormal(g, mean):
        v = torch.empty(g).log_normal_(0, 1, generator=rng)
        v = (v / v.mean() * mean).long().tolist()
        v[0] = 0  # an expert with no tokens
        return v

    cases = [
        ("single tile", [128], 256, 256),
        ("ragged N, partial experts", [100, 0, 37, 128], 264, 384),
        ("skewed small", lognormal(6, 150), 512, 512),
    ]
    if not args.small:
        cases += [
            ("M_sum 128", [128], 4096, 7168),
            ("DeepGEMM G4 N4096 K7168", [8192] * 4, 4096, 7168),
            ("DeepGEMM G4 N7168 K2048", [8192] * 4, 7168, 2048),
            ("DeepGEMM G8 N4096 K7168", [8192] * 8, 4096, 7168),
            ("skewed G8 N7168 K2048", lognormal(8, 8192), 7168, 2048),
            ("ragged N 2056", [3000, 5000], 2056, 1024),
        ]
    ok = True
    for name, tokens, n, k in cases:
        ok &= run_case(name, tokens, n, k, args.repeats, gen)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
