"""Benchmark of the m-grouped contiguous FP8 GEMM beside its peers, in one process.

    python bench/bench_m_grouped.py [--reps 30] [--shapes deepgemm|all] [--variant NAME=DIR ...]

For each shape, on the same operands (per-token FP8 A with 1x128 FP32 scales,
per-block FP8 B with 128x128 FP32 scales, BF16 d, each expert's rows padded to
128): dgemm's m_grouped_fp8_gemm_nt_contiguous, DeepGEMM's (when the
``deep_gemm`` package imports; SM90 1D2D with FP32 scales), and, as a
reference point on other operands, torch._grouped_mm on the dequantized BF16
operands (torch has no 128x128 block-scaled grouped GEMM: _scaled_grouped_mm
takes row/column-wise scales only). Each timing: L2 flushed (a 256 MiB write)
before every call, CUDA events around the call alone, median of ``--reps``
calls after 3 warm-up calls. TFLOPS = 2 * (valid rows) * N * K / time. dgemm's
result is checked against DeepGEMM's (calc_diff) before timing.

``--variant NAME=DIR`` (repeatable) also times dgemm with the kernel bundle in
DIR (an experiment's kernels, same entry names), in the same process on the
same operands, after checking that its output is bitwise equal to the
default bundle's; the default bundle is the one calls use without it
(DGEMM_KERNEL_DIR or the package's).
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch

import dgemm
from dgemm.testing import calc_diff


def layout_for(tokens, align, device):
    rows = []
    for e, t in enumerate(tokens):
        rows += [e] * t + [-1] * ((t + align - 1) // align * align - t)
    return torch.tensor(rows, dtype=torch.int32, device=device)


# GPU cycles the stream sleeps between the L2 flush and the timed call (about 2 ms): the call's
# host work (argument checks, dispatch, the launch) is enqueued meanwhile, so the events time
# the GPU work alone. Without it a call whose host work outlasts the flush was timed with the
# GPU idle waiting for the launch (bench/NOTES.md, "The timer counted host time").
SLEEP_CYCLES = 4_000_000


def timed(fn, reps, flush):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        torch.cuda._sleep(SLEEP_CYCLES)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--shapes", default="deepgemm")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=DIR",
                   help="also time the kernel bundle in DIR, labelled NAME")
    args = p.parse_args()
    variants = []
    for v in args.variant:
        name, sep, path = v.partition("=")
        if not sep or not name or not os.path.isdir(path):
            p.error(f"--variant {v!r}: expected NAME=DIR with DIR a kernel bundle directory")
        variants.append((name, os.path.abspath(path)))
    # The environment overrides set_kernel_dir: hold the default bundle in the API instead.
    default_dir = os.environ.pop("DGEMM_KERNEL_DIR", None)
    if default_dir:
        dgemm.set_kernel_dir(default_dir)
    elif variants:
        from dgemm._runtime import check_kernel_bundle
        default_dir = check_kernel_bundle()["dir"]
    try:
        import deep_gemm  # noqa: F401
        dg = deep_gemm
    except Exception as e:  # the peer is optional
        print(f"DeepGEMM: not available ({type(e).__name__}: {e})")
        dg = None
    dev = "cuda"
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"DeepGEMM {getattr(dg, '__version__', '-') if dg else '-'}")
    shapes = [(g, 8192, n, k) for g in (4, 8) for n, k in ((4096, 7168), (7168, 2048))]
    if args.shapes == "all":
        shapes += [(8, 4096, 4096, 7168), (16, 2048, 7168, 2048), (4, 128, 4096, 7168)]
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    print(f"{'G':>3} {'m/grp':>6} {'N':>5} {'K':>5} | {'dgemm':>8} {'DeepGEMM':>9} {'ratio':>6} "
          f"{'torch bf16':>10} | diff vs DG"
          + "".join(f" | {n:>10} {'ratio':>6}" for n, _ in variants) + "   (TFLOPS)")
    for g, mpg, n, k in shapes:
        torch.manual_seed(0)
        tokens = [mpg] * g
        layout = layout_for(tokens, 128, dev)
        m = layout.numel()
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(g, n, k, device=dev, dtype=torch.bfloat16)
        x_fp8, sfa = dgemm.per_token_cast_to_fp8(x)
        w_fp8 = torch.empty(g, n, k, device=dev, dtype=torch.float8_e4m3fn)
        sfb = torch.empty(g, (n + 127) // 128, k // 128, device=dev)
        for e in range(g):
            w_fp8[e], sfb[e] = dgemm.per_block_cast_to_fp8(w[e])
        sfa_t = dgemm.get_mn_major_tma_aligned_tensor(sfa)
        d = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
        flops = 2 * sum(tokens) * n * k

        def ours():
            dgemm.m_grouped_fp8_gemm_nt_contiguous((x_fp8, sfa_t), (w_fp8, sfb), d, layout,
                                                   check_grouped_layout=False)

        t_ours = timed(ours, args.reps, flush)
        t_dg = diff = None
        if dg is not None:
            d_dg = torch.empty_like(d)

            def theirs():
                dg.m_grouped_fp8_gemm_nt_contiguous((x_fp8, sfa), (w_fp8, sfb), d_dg, layout,
                                                    disable_ue8m0_cast=True)

            try:
                theirs()
                ours()
                torch.cuda.synchronize()
                valid = layout >= 0
                diff = calc_diff(d[valid].float(), d_dg[valid].float())
                t_dg = timed(theirs, args.reps, flush)
            except Exception as e:
                print(f"  DeepGEMM failed: {type(e).__name__}: {e}")
        xb = x.view(m, k)
        offs = torch.arange(1, g + 1, device=dev, dtype=torch.int32) * (m // g)
        t_torch = None
        try:
            wt = w.transpose(1, 2)

            def bf16():
                torch._grouped_mm(xb, wt, offs=offs)

            t_torch = timed(bf16, args.reps, flush)
        except Exception as e:
            print(f"  torch._grouped_mm failed: {type(e).__name__}: {e}")
        tf = lambda t: f"{flops / t / 1e12:8.1f}" if t else f"{'-':>8}"
        ratio = f"{t_dg / t_ours:6.3f}" if t_dg else f"{'-':>6}"
        cols = []
        for name, path in variants:
            dgemm.set_kernel_dir(path)
            try:
                expected = d.clone()
                d.fill_(float("nan"))
                ours()
                torch.cuda.synchronize()
                if not torch.equal(d[layout >= 0], expected[layout >= 0]):
                    cols.append(f" | {'NOT EQUAL':>10} {'-':>6}")
                else:
                    t_v = timed(ours, args.reps, flush)
                    cols.append(f" | {flops / t_v / 1e12:10.1f} {t_ours / t_v:6.3f}")
            except Exception as e:
                cols.append(f" | failed: {type(e).__name__}: {e}")
            finally:
                dgemm.set_kernel_dir(default_dir or "")
        print(f"{g:>3} {mpg:>6} {n:>5} {k:>5} | {tf(t_ours)} {tf(t_dg):>9} {ratio} "
              f"{tf(t_torch):>10} | {diff if diff is None else f'{diff:.2e}'}" + "".join(cols),
              flush=True)


if __name__ == "__main__":
    main()
