"""GPU correctness of the masked and normal FP8 GEMMs (run on the GPU machine).

    python bench/check_kinds.py [--small] [--repeats R] [--only masked|normal|graph|1d1d]
    python bench/check_kinds.py --dry-run     # no GPU: the case list and the host-side checks

Each case: fresh random operands, per-token / per-block FP8 casts, d poisoned with NaN,
one call compared with an FP32 reference of the dequantized operands (TF32 off) by
DeepGEMM's calc_diff (< 1e-3), the rows the kernel must not write checked still poisoned,
then R more calls on the same inputs compared bitwise.

- masked (m_grouped_fp8_gemm_nt_masked): masked_m all 0, all 1, all M_max, random in
  [0, M_max], and values outside [0, M_max] (negative, M_max + 100, 2^31 - 1), which the
  kernel clamps into [0, M_max]; rows r >= clamp(masked_m[g]) must stay NaN.
- graph: one masked call captured into a CUDA graph, replayed with masked_m changed in place
  between replays (the host never reads masked_m); each replay checked as above.
- normal (fp8_gemm_nt, BF16 d): ragged M (1, 127, 4097) and DeepGEMM's normal shapes
  (M 128 / 4096 with N, K from 2112 x 7168, 24576 x 1536, 32768 x 512, 7168 x 2048,
  4096 x 7168); d is the first M rows of a larger NaN buffer whose rows past M must stay NaN.
- 1d1d (fp8_gemm_nt, recipe (1, 1, 128), FP32 d): c None, c = d (accumulate) and a
  separate c; the k-grouped kernel with one group.

Prints one line per case and exits nonzero if any fails. --small runs the cases small
enough for compute-sanitizer.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from typing import List, Optional

import torch

import dgemm
from dgemm.testing import calc_diff

INT32_MAX = 2**31 - 1


@dataclass
class MaskedCase:
    name: str
    g: int
    m_max: int
    n: int
    k: int
    counts: str  # zeros, ones, full, random, beyond
    expected_m: int


@dataclass
class NormalCase:
    name: str
    m: int
    n: int
    k: int


def masked_counts(kind: str, g: int, m_max: int, rng: torch.Generator) -> List[int]:
    """masked_m for a case: the values the kernel reads (possibly outside [0, M_max])."""
    if kind == "zeros":
        return [0] * g
    if kind == "ones":
        return [1] * g
    if kind == "full":
        return [m_max] * g
    if kind == "random":
        return torch.randint(0, m_max + 1, (g,), generator=rng).tolist()
    if kind == "beyond":
        pattern = [-5, m_max + 100, INT32_MAX, -INT32_MAX - 1, m_max, 0]
        return [pattern[i % len(pattern)] for i in range(g)]
    raise ValueError(f"unknown masked_m kind {kind!r}")


def clamped(counts: List[int], m_max: int) -> List[int]:
    """The rows each group computes: masked_m[g] clamped into [0, M_max] (docs/KernelABI.md)."""
    return [min(max(c, 0), m_max) for c in counts]


def masked_cases(small: bool) -> List[MaskedCase]:
    cases = [
        MaskedCase("zeros", 2, 128, 256, 256, "zeros", 64),
        MaskedCase("ones", 3, 192, 264, 384, "ones", 1),
        MaskedCase("full, ragged M_max", 2, 200, 256, 512, "full", 200),
        MaskedCase("random", 4, 256, 512, 256, "random", 128),
        MaskedCase("beyond [0, M_max]", 6, 160, 256, 256, "beyond", 64),
    ]
    if not small:
        cases += [
            MaskedCase("DeepGEMM G4 M1024 N4096 K7168", 4, 1024, 4096, 7168, "random", 256),
            MaskedCase("DeepGEMM G8 M512 N7168 K2048", 8, 512, 7168, 2048, "random", 128),
            MaskedCase("DeepGEMM G16 M256 N4096 K7168 full", 16, 256, 4096, 7168, "full", 256),
            MaskedCase("G2 M4096 N2112 K7168 beyond", 2, 4096, 2112, 7168, "beyond", 1024),
        ]
    return cases


def normal_cases(small: bool) -> List[NormalCase]:
    cases = [NormalCase(f"ragged M {m}", m, 264, 384) for m in (1, 127)]
    if not small:
        cases += [NormalCase("ragged M 4097", 4097, 2112, 7168)]
        for m in (128, 4096):
            for n, k in ((2112, 7168), (24576, 1536), (32768, 512), (7168, 2048), (4096, 7168)):
                cases.append(NormalCase(f"DeepGEMM M{m} N{n} K{k}", m, n, k))
    return cases


def one_d_one_d_cases(small: bool) -> List[NormalCase]:
    cases = [NormalCase("1D1D small", 128, 256, 256)]
    if not small:
        cases += [NormalCase("1D1D M128 N2112 K7168", 128, 2112, 7168),
                  NormalCase("1D1D M4096 N4096 K7168", 4096, 4096, 7168)]
    return cases


def masked_operands(case: MaskedCase, device, gen):
    g, m, n, k = case.g, case.m_max, case.n, case.k
    x = torch.randn((g, m, k), device=device, generator=gen, dtype=torch.bfloat16)
    w = torch.randn((g, n, k), device=device, generator=gen, dtype=torch.bfloat16)
    x_fp8 = torch.empty((g, m, k), device=device, dtype=torch.float8_e4m3fn)
    sfa = torch.empty((g, m, k // 128), device=device)
    w_fp8 = torch.empty((g, n, k), device=device, dtype=torch.float8_e4m3fn)
    sfb = torch.empty((g, (n + 127) // 128, k // 128), device=device)
    for e in range(g):
        x_fp8[e], sfa[e] = dgemm.per_token_cast_to_fp8(x[e])
        w_fp8[e], sfb[e] = dgemm.per_block_cast_to_fp8(w[e])
    return (x_fp8, sfa), (w_fp8, sfb)


def check_masked_output(d, ref, rows: List[int]) -> List[str]:
    """Problems of a masked result: rows below each group's count close to the reference,
    every other row still NaN. [] when it is right."""
    problems = []
    valid = torch.zeros(d.shape[:2], dtype=torch.bool, device=d.device)
    for e, r in enumerate(rows):
        valid[e, :r] = True
    if valid.any():
        got = d[valid].float()
        diff = calc_diff(got, ref[valid])
        if not (diff < 1e-3) or not torch.isfinite(got).all():
            problems.append(f"calc_diff={diff:.2e}")
    if (~valid).any() and not torch.isnan(d[~valid].float()).all():
        problems.append("rows past masked_m written")
    return problems


def same_bits(x: torch.Tensor, y: torch.Tensor) -> bool:
    return torch.equal(x.view(torch.int16 if x.element_size() == 2 else torch.int32),
                       y.view(torch.int16 if y.element_size() == 2 else torch.int32))


def report(name: str, detail: str, problems: List[str]) -> bool:
    print(f"{'FAIL' if problems else 'PASS'} {name}: {detail} {' '.join(problems)}", flush=True)
    return not problems


def run_masked(case: MaskedCase, repeats: int, gen, rng) -> bool:
    dev = "cuda"
    a, b = masked_operands(case, dev, gen)
    counts = masked_counts(case.counts, case.g, case.m_max, rng)
    masked_m = torch.tensor(counts, dtype=torch.int32, device=dev)
    rows = clamped(counts, case.m_max)
    d = torch.full((case.g, case.m_max, case.n), float("nan"), device=dev, dtype=torch.bfloat16)
    dgemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, case.expected_m)
    torch.cuda.synchronize()
    ref = dgemm.m_grouped_masked_reference(a, b, rows)
    problems = check_masked_output(d, ref, rows)
    for _ in range(repeats):
        d2 = torch.full_like(d, float("nan"))
        dgemm.m_grouped_fp8_gemm_nt_masked(a, b, d2, masked_m, case.expected_m)
        if not same_bits(d2, d):
            problems.append("non-deterministic")
            break
    torch.cuda.synchronize()
    return report(f"masked {case.name}",
                  f"G={case.g} M_max={case.m_max} N={case.n} K={case.k} masked_m={counts[:6]}",
                  problems)


def run_graph(small: bool, gen, rng) -> bool:
    """One masked call captured into a CUDA graph; masked_m changed between replays."""
    case = MaskedCase("graph", 4, 256 if small else 1024, 512 if small else 4096,
                      256 if small else 7168, "random", 128)
    dev = "cuda"
    a, b = masked_operands(case, dev, gen)
    a = (a[0], dgemm.get_mn_major_tma_aligned_tensor(a[1]))  # no copy inside the capture
    masked_m = torch.zeros(case.g, dtype=torch.int32, device=dev)
    d = torch.full((case.g, case.m_max, case.n), float("nan"), device=dev, dtype=torch.bfloat16)
    # Loads the runtime and the kernel before capturing.
    dgemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, case.expected_m)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dgemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, case.expected_m)
    ok = True
    replays = [masked_counts(kind, case.g, case.m_max, rng)
               for kind in ("random", "full", "zeros", "beyond", "random")]
    for counts in replays:
        d.fill_(float("nan"))
        masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        rows = clamped(counts, case.m_max)
        ref = dgemm.m_grouped_masked_reference(a, b, rows)
        ok &= report("graph replay", f"G={case.g} M_max={case.m_max} masked_m={counts}",
                     check_masked_output(d, ref, rows))
    return ok


def run_normal(case: NormalCase, repeats: int, gen) -> bool:
    dev = "cuda"
    x = torch.randn((case.m, case.k), device=dev, generator=gen, dtype=torch.bfloat16)
    w = torch.randn((case.n, case.k), device=dev, generator=gen, dtype=torch.bfloat16)
    a = dgemm.per_token_cast_to_fp8(x)
    b = dgemm.per_block_cast_to_fp8(w)
    # d is the first M rows of a NaN buffer: the rows past M must stay NaN.
    pad = 128
    full = torch.full((case.m + pad, case.n), float("nan"), device=dev, dtype=torch.bfloat16)
    d = full[:case.m]
    dgemm.fp8_gemm_nt(a, b, d)
    torch.cuda.synchronize()
    ref = dgemm.fp8_gemm_nt_reference(a, b)
    problems = []
    diff = calc_diff(d.float(), ref)
    if not (diff < 1e-3) or not torch.isfinite(d.float()).all():
        problems.append(f"calc_diff={diff:.2e}")
    if not torch.isnan(full[case.m:].float()).all():
        problems.append("rows past M written")
    for _ in range(repeats):
        d2 = torch.full_like(d, float("nan"))
        dgemm.fp8_gemm_nt(a, b, d2)
        if not same_bits(d2, d):
            problems.append("non-deterministic")
            break
    torch.cuda.synchronize()
    return report(f"normal {case.name}", f"M={case.m} N={case.n} K={case.k} "
                  f"calc_diff={diff:.2e}", problems)


def run_1d1d(case: NormalCase, repeats: int, gen) -> bool:
    dev = "cuda"
    recipe = (1, 1, 128)
    a = dgemm.per_token_cast_to_fp8(
        torch.randn((case.m, case.k), device=dev, generator=gen, dtype=torch.bfloat16))
    b = dgemm.per_token_cast_to_fp8(
        torch.randn((case.n, case.k), device=dev, generator=gen, dtype=torch.bfloat16))
    ref = dgemm.fp8_gemm_nt_reference(a, b, recipe=recipe)
    c = torch.randn((case.m, case.n), device=dev, generator=gen)
    problems = []
    d = torch.full((case.m, case.n), float("nan"), device=dev)
    dgemm.fp8_gemm_nt(a, b, d, recipe=recipe)
    acc = c.clone()
    dgemm.fp8_gemm_nt(a, b, acc, c=acc, recipe=recipe)
    sep = torch.full((case.m, case.n), float("nan"), device=dev)
    dgemm.fp8_gemm_nt(a, b, sep, c=c, recipe=recipe)
    torch.cuda.synchronize()
    for label, got, want in (("c=None", d, ref), ("c=d", acc, c + ref), ("c separate", sep, c + ref)):
        diff = calc_diff(got, want)
        if not (diff < 1e-3) or not torch.isfinite(got).all():
            problems.append(f"{label} calc_diff={diff:.2e}")
    for _ in range(repeats):
        d2 = torch.full_like(d, float("nan"))
        dgemm.fp8_gemm_nt(a, b, d2, recipe=recipe)
        if not same_bits(d2, d):
            problems.append("non-deterministic")
            break
    torch.cuda.synchronize()
    return report(f"normal {case.name}", f"M={case.m} N={case.n} K={case.k}", problems)


def dry_run() -> bool:
    """The case lists and the host-side checks on CPU tensors, with no kernel: the reference
    of a masked call stands in for the kernel's output, poisoned where the kernel must not
    write, and the checks must accept it and reject a written poisoned row."""
    rng = torch.Generator().manual_seed(3)
    for small in (True, False):
        for case in masked_cases(small):
            counts = masked_counts(case.counts, case.g, case.m_max, rng)
            rows = clamped(counts, case.m_max)
            assert len(counts) == case.g and all(0 <= r <= case.m_max for r in rows)
            assert case.n % 8 == 0 and case.k % 128 == 0 and case.expected_m >= 1
        for case in normal_cases(small) + one_d_one_d_cases(small):
            assert case.n % 8 == 0 and case.k % 128 == 0 and case.m >= 1
        for case in one_d_one_d_cases(small):
            assert case.m % 4 == 0 and case.n % 4 == 0
    assert clamped([-5, 300, INT32_MAX, 7], 256) == [0, 256, 256, 7]
    case = MaskedCase("dry", 3, 24, 16, 128, "beyond", 8)
    a, b = masked_operands(case, "cpu", torch.Generator().manual_seed(0))
    counts = masked_counts("random", case.g, case.m_max, rng)
    rows = clamped(counts, case.m_max)
    ref = dgemm.m_grouped_masked_reference(a, b, rows)
    d = ref.to(torch.bfloat16)
    for e, r in enumerate(rows):
        d[e, r:] = float("nan")
    assert check_masked_output(d, ref, rows) == [], "the checks reject a right result"
    if min(rows) < case.m_max:
        e = rows.index(min(rows))
        d[e, rows[e]] = 0
        assert "rows past masked_m written" in check_masked_output(d, ref, rows)
    n = len(masked_cases(False)) + len(normal_cases(False)) + len(one_d_one_d_cases(False))
    print(f"dry run: {n} cases (+ the graph case), host-side checks pass")
    return True


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--small", action="store_true")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--only", choices=["masked", "normal", "graph", "1d1d"])
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    if args.dry_run:
        return 0 if dry_run() else 1
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int(time.time()))
    rng = torch.Generator().manual_seed(11)
    want = lambda part: args.only in (None, part)  # noqa: E731
    ok = True
    if want("masked"):
        for case in masked_cases(args.small):
            ok &= run_masked(case, args.repeats, gen, rng)
    if want("graph"):
        ok &= run_graph(args.small, gen, rng)
    if want("normal"):
        for case in normal_cases(args.small):
            ok &= run_normal(case, args.repeats, gen)
    if want("1d1d"):
        for case in one_d_one_d_cases(args.small):
            ok &= run_1d1d(case, args.repeats, gen)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
