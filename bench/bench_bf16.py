"""Benchmark of the BF16 GEMMs beside their peers, in one process.

    python bench/bench_bf16.py [--reps 30] [--only normal|m_grouped|masked|k_grouped] [--quick]

On DeepGEMM's test shapes (tests/test_bf16.py, tests/generators.py), for each kind on the same
operands: dgemm's function; DeepGEMM 2.8.2's same function (when ``deep_gemm`` imports) --
for the normal GEMM twice, with its default path (cuBLASLt) and with
``deep_gemm.use_deterministic_algorithms(True)`` (its own kernel), the grouped ones have only
their kernel; and torch as a reference point (``torch.matmul``; ``torch._grouped_mm`` for the
contiguous and k-grouped GEMMs, ``torch.bmm`` over the rows of the largest group for the
masked one). Each timing is bench_m_grouped.py's: the L2 flushed (a 256 MiB write) before
every call, CUDA events around the call alone, median of ``--reps`` calls after 3 warm-up
calls. TFLOPS = 2 * M * N * K / time with the rows and K that are computed (valid rows for
the grouped kinds, sum(ks) for k-grouped). dgemm's result is compared (calc_diff) with
DeepGEMM's kernel before timing. ``--quick``: the first shapes of each kind only.
"""

from __future__ import annotations

import argparse
import random
from typing import Callable, Optional

import torch

import dgemm
from bench_m_grouped import timed  # the same timer: L2 flush, events, median
from dgemm.testing import calc_diff

BF = torch.bfloat16
NORMAL_BF16_NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384),
                  (4096, 7168), (7168, 2048)]
NORMAL_F32_NK = [(256, 7168), (129280, 7168)]
GROUPED_NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]
K_GROUPED = [(8, 768, 2048, 128), (4, 4096, 7168, 8192), (4, 7168, 2048, 8192),
             (8, 4096, 7168, 4096), (8, 7168, 2048, 4096), (16, 4096, 7168, 2048),
             (16, 7168, 2048, 2048)]


class Bench:
    def __init__(self, dg, reps: int):
        self.dg, self.reps = dg, reps
        self.flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def time(self, label: str, fn: Callable[[], None]) -> Optional[float]:
        try:
            return timed(fn, self.reps, self.flush)
        except Exception as e:  # a peer's failure must not stop the run
            print(f"  {label} failed: {type(e).__name__}: {e}", flush=True)
            return None

    def dg_call(self, name: str, fn: Callable[[], None]) -> Optional[Callable[[], None]]:
        """DeepGEMM's call ``fn`` run once (a check that it runs); ``fn`` to time, or None."""
        if self.dg is None:
            return None
        try:
            fn()
            torch.cuda.synchronize()
            return fn
        except Exception as e:
            print(f"  DeepGEMM {name} failed: {type(e).__name__}: {e}", flush=True)
            return None

    def deterministic(self, on: bool) -> bool:
        """deep_gemm.use_deterministic_algorithms(on) where DeepGEMM has it: its BF16 GEMM
        runs its own kernel (on) or cuBLASLt (off, its default)."""
        switch = getattr(self.dg, "use_deterministic_algorithms", None)
        if switch is None:
            return False
        switch(on)
        return True


def tflops(flops: float, t: Optional[float]) -> str:
    return f"{flops / t / 1e12:8.1f}" if t else f"{'-':>8}"


def ratio(t_peer: Optional[float], t_ours: Optional[float]) -> str:
    return f"{t_peer / t_ours:6.3f}" if t_peer and t_ours else f"{'-':>6}"


def diff_text(diff: Optional[float]) -> str:
    return "-" if diff is None else f"{diff:.2e}"


def bench_normal(b: Bench, quick: bool) -> None:
    print(f"normal {'M':>6} {'N':>6} {'K':>6} lay out  acc |    dgemm DG cuBLAS   DG det  ratio"
          f"   matmul | diff vs DG det   (TFLOPS; ratio = DG det time / dgemm time)")
    shapes = [(m, n, k, "nt", BF, False) for m in (1, 128, 4096) for n, k in NORMAL_BF16_NK]
    shapes += [(m, n, k, "nt", torch.float32, False) for m in (1, 128, 4096)
               for n, k in NORMAL_F32_NK]
    for n, k in NORMAL_BF16_NK + NORMAL_F32_NK:
        shapes += [(4096, k, n, "nn", BF, False), (n, 4096, k, "tn", torch.float32, True),
                   (n, 4096, k, "tn", BF, False)]
    if quick:
        shapes = shapes[::6]
    for m, n, k, layout, out, acc in shapes:
        torch.manual_seed(0)
        a = torch.randn(m, k, device="cuda", dtype=BF)
        w = torch.randn(n, k, device="cuda", dtype=BF)
        # The operands as the layout gives them ([K, M] for a transposed a, [K, N] for b).
        a_arg = a if layout[0] == "n" else a.t().contiguous()
        b_arg = w if layout[1] == "t" else w.t().contiguous()
        d = torch.randn(m, n, device="cuda").to(out)
        c = d if acc else None
        fn = getattr(dgemm, f"bf16_gemm_{layout}")
        t_ours = b.time("dgemm", lambda: fn(a_arg, b_arg, d, c=c))
        diff = t_cublas = t_det = None
        if b.dg is not None:
            dg_fn = getattr(b.dg, f"bf16_gemm_{layout}")
            d_dg = d.clone()
            c_dg = d_dg if acc else None
            call = lambda: dg_fn(a_arg, b_arg, d_dg, c=c_dg)  # noqa: E731
            if b.deterministic(True):
                det = b.dg_call(f"bf16_gemm_{layout} (deterministic)", call)
                if det is not None and not acc:
                    fn(a_arg, b_arg, d, c=c)
                    torch.cuda.synchronize()
                    diff = calc_diff(d.float(), d_dg.float())
                if det is not None:
                    t_det = b.time("DeepGEMM (deterministic)", det)
                b.deterministic(False)
            else:
                print("  DeepGEMM has no use_deterministic_algorithms", flush=True)
            if b.dg_call(f"bf16_gemm_{layout} (cuBLASLt)", call) is not None:
                t_cublas = b.time("DeepGEMM (cuBLASLt)", call)
        a_mm = a if layout[0] == "n" else a_arg.t()
        b_mm = w.t() if layout[1] == "t" else b_arg
        t_mm = b.time("torch.matmul", lambda: torch.matmul(a_mm, b_mm))
        flops = 2 * m * n * k
        print(f"normal {m:>6} {n:>6} {k:>6} {layout:>3} {'f32' if out != BF else 'bf16':>4} "
              f"{'yes' if acc else 'no':>4} | {tflops(flops, t_ours)} {tflops(flops, t_cublas):>9}"
              f" {tflops(flops, t_det)} {ratio(t_det, t_ours)} {tflops(flops, t_mm)} | "
              f"{diff_text(diff)}", flush=True)
        del a, w, a_arg, b_arg, d
        torch.cuda.empty_cache()


def aligned_layout(tokens, device):
    rows, starts, start = [], [], 0
    for e, t in enumerate(tokens):
        starts.append(start)
        padded = (t + 127) // 128 * 128
        rows += [e] * t + [-1] * (padded - t)
        start += padded
    return torch.tensor(rows, dtype=torch.int32, device=device), starts


def bench_m_grouped(b: Bench, quick: bool, rng: random.Random) -> None:
    print(f"m_grouped {'G':>3} {'rows':>6} {'N':>5} {'K':>5} lay psum |    dgemm DeepGEMM  ratio"
          f" _grouped_mm | diff vs DG   (TFLOPS on the valid rows)")
    shapes = [(g, exp, n, k, layout, psum) for psum in (False, True)
              for g, exp in ((4, 8192), (8, 4096)) for n, k in GROUPED_NK
              for layout in ("nt", "nn")]
    if quick:
        shapes = shapes[::5]
    for g, expected, n, k, layout, psum in shapes:
        torch.manual_seed(0)
        tokens = [int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)]
        layout_rows, starts = aligned_layout(tokens, "cuda")
        m = layout_rows.numel()
        psum_t = torch.tensor([s + t for s, t in zip(starts, tokens)], dtype=torch.int32,
                              device="cuda")
        arg = psum_t if psum else layout_rows
        a = torch.randn(m, k, device="cuda", dtype=BF)
        w = torch.randn(g, n, k, device="cuda", dtype=BF)
        w_arg = w if layout == "nt" else w.transpose(1, 2).contiguous()
        d = torch.empty(m, n, device="cuda", dtype=BF)
        fn = getattr(dgemm, f"m_grouped_bf16_gemm_{layout}_contiguous")
        t_ours = b.time("dgemm", lambda: fn(a, w_arg, d, arg, use_psum_layout=psum,
                                            check_grouped_layout=False))
        diff = t_dg = None
        if b.dg is not None:
            dg_fn = getattr(b.dg, f"m_grouped_bf16_gemm_{layout}_contiguous")
            d_dg = torch.empty_like(d)
            theirs = b.dg_call(f"m_grouped_bf16_gemm_{layout}_contiguous",
                               lambda: dg_fn(a, w_arg, d_dg, arg, use_psum_layout=psum))
            if theirs is not None:
                valid = layout_rows >= 0
                diff = calc_diff(d[valid].float(), d_dg[valid].float())
                t_dg = b.time("DeepGEMM", theirs)
        ends = torch.cumsum(torch.tensor([(t + 127) // 128 * 128 for t in tokens]), 0)
        offs = ends.to(torch.int32).cuda()
        w_kn = w.transpose(1, 2)
        t_torch = b.time("torch._grouped_mm", lambda: torch._grouped_mm(a, w_kn, offs=offs))
        flops = 2 * sum(tokens) * n * k
        print(f"m_grouped {g:>3} {expected:>6} {n:>5} {k:>5} {layout:>3} {int(psum):>4} | "
              f"{tflops(flops, t_ours)} {tflops(flops, t_dg)} {ratio(t_dg, t_ours)} "
              f"{tflops(flops, t_torch):>11} | {diff_text(diff)}", flush=True)
        del a, w, w_arg, d
        torch.cuda.empty_cache()


def bench_masked(b: Bench, quick: bool, rng: random.Random) -> None:
    print(f"masked {'G':>3} {'exp_m':>5} {'N':>5} {'K':>5} |    dgemm DeepGEMM  ratio    bmm | "
          f"diff vs DG   (TFLOPS on the valid rows; M_max 4096)")
    shapes = [(g, exp, n, k) for g, exp in ((32, 192), (6, 1024), (32, 20), (6, 20))
              for n, k in GROUPED_NK]
    if quick:
        shapes = shapes[::4]
    m_max = 4096
    for g, expected, n, k in shapes:
        torch.manual_seed(0)
        counts = [int(expected * rng.uniform(0.7, 1.3)) for _ in range(g)]
        masked_m = torch.tensor(counts, dtype=torch.int32, device="cuda")
        a = torch.randn(g, m_max, k, device="cuda", dtype=BF)
        w = torch.randn(g, n, k, device="cuda", dtype=BF)
        d = torch.empty(g, m_max, n, device="cuda", dtype=BF)
        t_ours = b.time("dgemm", lambda: dgemm.m_grouped_bf16_gemm_nt_masked(a, w, d, masked_m,
                                                                             expected))
        diff = t_dg = None
        if b.dg is not None:
            d_dg = torch.empty_like(d)
            theirs = b.dg_call("m_grouped_bf16_gemm_nt_masked",
                               lambda: b.dg.m_grouped_bf16_gemm_nt_masked(a, w, d_dg, masked_m,
                                                                          expected))
            if theirs is not None:
                valid = torch.arange(m_max, device="cuda")[None, :] < masked_m[:, None]
                diff = calc_diff(d[valid].float(), d_dg[valid].float())
                t_dg = b.time("DeepGEMM", theirs)
        rows = max(counts)
        a_rows, w_kn = a[:, :rows], w.transpose(1, 2)
        t_bmm = b.time("torch.bmm", lambda: torch.bmm(a_rows, w_kn))
        flops = 2 * sum(counts) * n * k
        print(f"masked {g:>3} {expected:>5} {n:>5} {k:>5} | {tflops(flops, t_ours)} "
              f"{tflops(flops, t_dg)} {ratio(t_dg, t_ours)} {tflops(flops, t_bmm)} | "
              f"{diff_text(diff)}", flush=True)
        del a, w, d
        torch.cuda.empty_cache()


def bench_k_grouped(b: Bench, quick: bool, rng: random.Random) -> None:
    print(f"k_grouped {'G':>3} {'M':>5} {'N':>5} {'K/grp':>5} |    dgemm DeepGEMM  ratio "
          f"_grouped_mm | diff vs DG   (TFLOPS; d += a_g^T b_g, FP32; _grouped_mm: BF16 d, no +=)")
    shapes = K_GROUPED[:2] if quick else K_GROUPED
    for g, m, n, expected in shapes:
        torch.manual_seed(0)
        ks = [(max(1, int(expected * rng.uniform(0.7, 1.3))) + 127) // 128 * 128
              for _ in range(g)]
        sum_k = sum(ks)
        a = torch.randn(sum_k, m, device="cuda", dtype=BF)
        w = torch.randn(sum_k, n, device="cuda", dtype=BF)
        ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
        d0 = torch.randn(g, m, n, device="cuda")
        d = d0.clone()
        t_ours = b.time("dgemm", lambda: dgemm.k_grouped_bf16_gemm_tn_contiguous(
            a, w, d, ks, ks_tensor, c=d))
        diff = t_dg = None
        if b.dg is not None:
            d_dg = d0.clone()
            d.copy_(d0)

            def theirs_call():
                b.dg.k_grouped_bf16_gemm_tn_contiguous(a, w, d_dg, ks, ks_tensor, d_dg)

            theirs = b.dg_call("k_grouped_bf16_gemm_tn_contiguous", theirs_call)
            if theirs is not None:
                dgemm.k_grouped_bf16_gemm_tn_contiguous(a, w, d, ks, ks_tensor, c=d)
                torch.cuda.synchronize()
                diff = calc_diff(d, d_dg)
                t_dg = b.time("DeepGEMM", theirs)
        a_mk = a.t().contiguous()                      # [M, sum_k], row-major
        w_kn = w.t().contiguous().t()                  # [sum_k, N], column-major
        offs = torch.cumsum(ks_tensor, 0, dtype=torch.int32)
        # torch._grouped_mm has no FP32 output for BF16 operands (it refuses
        # out_dtype=float32), so its column writes a BF16 d [G, M, N] without
        # the accumulation: a reference point, not the same work.
        t_torch = b.time("torch._grouped_mm",
                         lambda: torch._grouped_mm(a_mk, w_kn, offs=offs))
        flops = 2 * m * n * sum_k
        print(f"k_grouped {g:>3} {m:>5} {n:>5} {expected:>5} | {tflops(flops, t_ours)} "
              f"{tflops(flops, t_dg)} {ratio(t_dg, t_ours)} {tflops(flops, t_torch):>11} | "
              f"{diff_text(diff)}", flush=True)
        del a, w, d, d0, a_mk, w_kn
        torch.cuda.empty_cache()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--only", choices=("normal", "m_grouped", "masked", "k_grouped"))
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    if args.reps < 30:
        print(f"note: --reps {args.reps} is below the 30 the results are reported with")
    try:
        import deep_gemm
        dg = deep_gemm
    except Exception as e:  # the peer is optional
        print(f"DeepGEMM: not available ({type(e).__name__}: {e})")
        dg = None
    print(f"device: {torch.cuda.get_device_name()}; torch {torch.__version__}; "
          f"DeepGEMM {getattr(dg, '__version__', '-') if dg else '-'}", flush=True)
    b = Bench(dg, args.reps)
    rng = random.Random(0)
    for kind, run in (("normal", lambda: bench_normal(b, args.quick)),
                      ("m_grouped", lambda: bench_m_grouped(b, args.quick, rng)),
                      ("masked", lambda: bench_masked(b, args.quick, rng)),
                      ("k_grouped", lambda: bench_k_grouped(b, args.quick, rng))):
        if args.only in (None, kind):
            run()


if __name__ == "__main__":
    main()
