"""Benchmark of the normal and masked FP8 GEMMs beside their peers, in one process.

    python bench/bench_kinds.py [--reps 30] [--only normal|masked]

normal: dgemm's fp8_gemm_nt (1D2D, BF16 d) on DeepGEMM's normal shapes, DeepGEMM's
fp8_gemm_nt on the same operands (when ``deep_gemm`` imports), and torch._scaled_mm with
row-wise scales (a reference point on other scales: torch has no 128x128 block scaling).
masked: dgemm's m_grouped_fp8_gemm_nt_masked on DeepGEMM's masked shapes (every group's
masked_m = expected_m), DeepGEMM's, and torch.bmm in BF16 over the valid rows (reference
point). Each timing: L2 flushed (a 256 MiB write) before every call, CUDA events around the
call alone, median of ``--reps`` calls after 3 warm-up calls. TFLOPS = 2 * (valid rows) *
N * K / time. dgemm's result is compared with DeepGEMM's (calc_diff) before timing.
"""

from __future__ import annotations

import argparse

import torch

import dgemm
from bench_m_grouped import timed  # the same timer: L2 flush, events, median
from dgemm.testing import calc_diff


def block_cast(w):
    """[G, N, K] BF16 -> FP8 and [G, ceil(N/128), K/128] scales."""
    g, n, k = w.shape
    w8 = torch.empty(g, n, k, device=w.device, dtype=torch.float8_e4m3fn)
    sfb = torch.empty(g, (n + 127) // 128, k // 128, device=w.device)
    for e in range(g):
        w8[e], sfb[e] = dgemm.per_block_cast_to_fp8(w[e])
    return w8, sfb


def row(label, flops, t_ours, t_dg, t_ref, diff):
    tf = lambda t: f"{flops / t / 1e12:8.1f}" if t else f"{'-':>8}"
    ratio = f"{t_dg / t_ours:6.3f}" if t_dg else f"{'-':>6}"
    d = "-" if diff is None else f"{diff:.2e}"
    print(f"{label} | {tf(t_ours)} {tf(t_dg):>9} {ratio} {tf(t_ref):>10} | {d}", flush=True)


def bench_normal(dg, reps, flush):
    print(f"normal {'M':>5} {'N':>6} {'K':>5} |    dgemm  DeepGEMM  ratio _scaled_mm | "
          "diff vs DG   (TFLOPS)")
    for m in (128, 4096):
        for n, k in ((2112, 7168), (24576, 1536), (32768, 512), (7168, 2048), (4096, 7168)):
            torch.manual_seed(0)
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
            x8, sfa = dgemm.per_token_cast_to_fp8(x)
            w8, sfb = dgemm.per_block_cast_to_fp8(w)
            sfa_t = dgemm.get_mn_major_tma_aligned_tensor(sfa)
            d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)

            def ours():
                dgemm.fp8_gemm_nt((x8, sfa_t), (w8, sfb), d)

            t_ours = timed(ours, reps, flush)
            t_dg = diff = None
            if dg is not None:
                d_dg = torch.empty_like(d)

                def theirs():
                    dg.fp8_gemm_nt((x8, sfa), (w8, sfb), d_dg, disable_ue8m0_cast=True)

                try:
                    theirs()
                    ours()
                    torch.cuda.synchronize()
                    diff = calc_diff(d.float(), d_dg.float())
                    t_dg = timed(theirs, reps, flush)
                except Exception as e:
                    print(f"  DeepGEMM failed: {type(e).__name__}: {e}")
            t_ref = None
            try:
                sa = x.float().abs().amax(dim=1, keepdim=True).clamp(min=1e-4) / 448.0
                sb = w.float().abs().amax(dim=1, keepdim=True).clamp(min=1e-4) / 448.0
                xr = (x.float() / sa).to(torch.float8_e4m3fn)
                wr = (w.float() / sb).to(torch.float8_e4m3fn)

                def ref():
                    torch._scaled_mm(xr, wr.t(), scale_a=sa, scale_b=sb.t(),
                                     out_dtype=torch.bfloat16)

                t_ref = timed(ref, reps, flush)
            except Exception as e:
                print(f"  torch._scaled_mm failed: {type(e).__name__}: {e}")
            row(f"normal {m:>5} {n:>6} {k:>5}", 2 * m * n * k, t_ours, t_dg, t_ref, diff)


def bench_masked(dg, reps, flush):
    print(f"masked {'G':>3} {'exp_m':>5} {'N':>5} {'K':>5} |    dgemm  DeepGEMM  ratio "
          "  bmm bf16 | diff vs DG   (TFLOPS)")
    for g, expected in ((1, 1024), (2, 512), (4, 256), (16, 64)):
        for n, k in ((4096, 7168), (7168, 2048)):
            torch.manual_seed(0)
            m_max = max(128, (expected * 2 + 127) // 128 * 128)
            x = torch.randn(g, m_max, k, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
            x8 = torch.empty(g, m_max, k, device="cuda", dtype=torch.float8_e4m3fn)
            sfa = torch.empty(g, m_max, k // 128, device="cuda")
            for e in range(g):
                x8[e], sfa[e] = dgemm.per_token_cast_to_fp8(x[e])
            w8, sfb = block_cast(w)
            sfa_t = dgemm.get_mn_major_tma_aligned_tensor(sfa)
            masked_m = torch.full((g,), expected, device="cuda", dtype=torch.int32)
            d = torch.empty(g, m_max, n, device="cuda", dtype=torch.bfloat16)

            def ours():
                dgemm.m_grouped_fp8_gemm_nt_masked((x8, sfa_t), (w8, sfb), d, masked_m,
                                                   expected)

            t_ours = timed(ours, reps, flush)
            t_dg = diff = None
            if dg is not None:
                d_dg = torch.empty_like(d)

                def theirs():
                    dg.m_grouped_fp8_gemm_nt_masked((x8, sfa), (w8, sfb), d_dg, masked_m,
                                                    expected, disable_ue8m0_cast=True)

                try:
                    theirs()
                    ours()
                    torch.cuda.synchronize()
                    diff = calc_diff(d[:, :expected].float(), d_dg[:, :expected].float())
                    t_dg = timed(theirs, reps, flush)
                except Exception as e:
                    print(f"  DeepGEMM failed: {type(e).__name__}: {e}")
            xb = x[:, :expected]
            wt = w.transpose(1, 2)
            t_ref = timed(lambda: torch.bmm(xb, wt), reps, flush)
            row(f"masked {g:>3} {expected:>5} {n:>5} {k:>5}", 2 * g * expected * n * k,
                t_ours, t_dg, t_ref, diff)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--only", choices=("normal", "masked"))
    args = p.parse_args()
    try:
        import deep_gemm
        dg = deep_gemm
    except Exception as e:  # the peer is optional
        print(f"DeepGEMM: not available ({type(e).__name__}: {e})")
        dg = None
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"DeepGEMM {getattr(dg, '__version__', '-') if dg else '-'}")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    if args.only in (None, "normal"):
        bench_normal(dg, args.reps, flush)
    if args.only in (None, "masked"):
        bench_masked(dg, args.reps, flush)


if __name__ == "__main__":
    main()
