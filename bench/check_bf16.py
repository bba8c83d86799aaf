"""GPU correctness of the BF16 GEMMs (run on the GPU machine).

    python bench/check_bf16.py [--small] [--repeats R] [--only KIND]
    python bench/check_bf16.py --dry-run     # no GPU: the case lists, the argument checks of
                                             # every case on fake tensors, the host-side checks

KIND: normal, m_grouped, masked, graph or k_grouped. Each case: fresh random BF16 operands
(seeded from the clock), outputs poisoned with NaN, one call compared with an FP32 torch
reference (TF32 off) by DeepGEMM's calc_diff below 1e-5 (its BF16 tests' threshold), the rows
the kernel must not write checked still NaN, then R more calls on the same inputs compared
bitwise with the first.

- normal (bf16_gemm_{nt,nn,tn,tt}): every layout with a BF16 d, an FP32 d, an FP32 d
  accumulated in place (c = d) and a separate c, on ragged shapes (M not a multiple of the
  tile, K not a multiple of 64 for K-major operands), each layout both through its own
  function and through bf16_gemm_nt with strided views; then DeepGEMM's shapes
  (tests/generators.py enumerate_normal: forward M 1, 128, 4096 on its nine (N, K), K-major;
  backward M 4096: the data gradient (nn) and the weight gradients (tn, FP32 accumulated,
  BF16 and FP32 d)). DeepGEMM's BF16-d accumulation cases are left out: only an FP32 d
  accumulates here. d is the first rows of a larger NaN buffer whose rest must stay NaN.
- m_grouped (m_grouped_bf16_gemm_{nt,nn}_contiguous): per-row layout and prefix sums, B
  K-major and MN-major (nt with b.mT, and the nn form), an empty expert; then DeepGEMM's
  shapes (enumerate_m_grouped_contiguous: G 4 x 8192 and 8 x 4096 rows per expert times 0.7 to
  1.3, four (N, K)). Padding rows and gaps must stay NaN.
- masked (m_grouped_bf16_gemm_nt_masked): masked_m all 0, all 1, all M_max, random, and
  outside [0, M_max] (clamped by the kernel); then DeepGEMM's shapes (enumerate_m_grouped_
  masked: M_max 4096, (G, expected) 32 x 192, 6 x 1024, 32 x 20, 6 x 20, four (N, K)).
- graph: one masked call captured into a CUDA graph, replayed with masked_m changed in place.
- k_grouped (k_grouped_bf16_gemm_tn_contiguous): c None, d and separate, an empty group,
  every group empty; then DeepGEMM's shapes (enumerate_k_grouped_contiguous: seven (G, M, N,
  K per group) with K_g 0.7 to 1.3 times it, aligned to 128; its variants with empty groups
  and with one group), accumulated in place as there; d is the first G groups of a NaN buffer.

Prints one line per case and exits nonzero if any fails. --small runs only the small cases
(compute-sanitizer, CI).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

import torch
from torch._subclasses.fake_tensor import is_fake

import dgemm
from check_kinds import clamped, masked_counts  # the masked_m edges of the FP8 kinds' check
from dgemm.testing import calc_diff, same_bits

THRESHOLD = 1e-5
INT32_MAX = 2**31 - 1
BF = torch.bfloat16
ALIGN = 128  # rows per expert segment (get_mk_alignment_for_contiguous_layout())


@dataclass
class Case:
    kind: str                 # normal, m_grouped, masked, k_grouped
    name: str
    m: int                    # M (normal, k_grouped), M_max (masked); m_grouped: unused
    n: int
    k: int
    layout: str = "nt"        # normal: nt, nn, tn, tt; m_grouped: nt, nt_mt (b.mT), nn
    out: str = "bf16"         # normal: bf16 or f32
    c: str = "none"           # normal (f32) and k_grouped: none, d or separate
    alias: bool = True        # normal: call bf16_gemm_<layout> (else bf16_gemm_nt on views)
    groups: List[int] = field(default_factory=list)  # m_grouped: rows per expert; masked:
    #                           masked_m; k_grouped: ks
    psum: bool = False        # m_grouped: the prefix-sum layout
    expected_m: int = 0       # masked

    def describe(self) -> str:
        shown = self.groups[:6] + (["..."] if len(self.groups) > 6 else [])
        extra = {"normal": f"{self.layout} d={self.out} c={self.c}"
                           f"{'' if self.alias else ' (nt on views)'}",
                 "m_grouped": f"{self.layout} {'psum' if self.psum else 'per-row'} "
                              f"rows={shown}",
                 "masked": f"masked_m={shown} expected_m={self.expected_m}",
                 "k_grouped": f"c={self.c} ks={shown}"}[self.kind]
        return f"M={self.m} N={self.n} K={self.k} {extra}"


def scaled(expected: int, count: int, rng: random.Random) -> List[int]:
    """DeepGEMM's group sizes: int(expected * uniform(0.7, 1.3)) each."""
    return [int(expected * rng.uniform(0.7, 1.3)) for _ in range(count)]


def align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


# --- case lists ------------------------------------------------------------------------------

DG_NORMAL_BF16_NK = [(2112, 7168), (576, 7168), (24576, 1536), (32768, 512), (7168, 16384),
                     (4096, 7168), (7168, 2048)]
DG_NORMAL_F32_NK = [(256, 7168), (129280, 7168)]
DG_GROUPED_NK = [(6144, 7168), (7168, 3072), (4096, 4096), (4096, 2048)]


def normal_cases(small: bool, rng: random.Random) -> List[Case]:
    cases = []
    for layout in ("nt", "nn", "tn", "tt"):
        for out, c in (("bf16", "none"), ("f32", "none"), ("f32", "d"), ("f32", "separate")):
            for alias in (True, False):
                cases.append(Case("normal", "ragged", 200, 136, 520 if layout == "nt" else 192,
                                  layout, out, c, alias))
    cases += [Case("normal", "M 1", 1, 256, 4096, "nt"), Case("normal", "M 1", 1, 264, 328, "nn"),
              Case("normal", "K 64", 264, 128, 64, "tn", "f32", "d")]
    if small:
        return cases
    for m in (1, 128, 4096):
        for n, k in DG_NORMAL_BF16_NK:
            cases.append(Case("normal", "DeepGEMM fwd", m, n, k, "nt", "bf16", alias=False))
        for n, k in DG_NORMAL_F32_NK:
            cases.append(Case("normal", "DeepGEMM fwd", m, n, k, "nt", "f32", alias=False))
    for n, k in DG_NORMAL_BF16_NK + DG_NORMAL_F32_NK:
        cases.append(Case("normal", "DeepGEMM dgrad", 4096, k, n, "nn", "bf16", alias=False))
        for out, c in (("f32", "d"), ("bf16", "none"), ("f32", "none")):
            cases.append(Case("normal", "DeepGEMM wgrad", n, 4096, k, "tn", out, c, alias=False))
    return cases


def m_grouped_cases(small: bool, rng: random.Random) -> List[Case]:
    cases = []
    for layout in ("nt", "nt_mt", "nn"):
        for psum in (False, True):
            cases.append(Case("m_grouped", "small", 0, 136, 192 if layout != "nt" else 200,
                              layout, groups=[100, 0, 250, 128], psum=psum))
    if small:
        return cases
    for psum in (False, True):
        for g, expected in ((4, 8192), (8, 4096)):
            for n, k in DG_GROUPED_NK:
                for layout in ("nt", "nn"):
                    cases.append(Case("m_grouped", "DeepGEMM", 0, n, k, layout,
                                      groups=scaled(expected, g, rng), psum=psum))
    return cases


def masked_cases(small: bool, rng: random.Random) -> List[Case]:
    counts = torch.Generator().manual_seed(rng.randrange(2**31))
    cases = [Case("masked", kind, 192, 136, 200, groups=masked_counts(kind, g, 192, counts),
                  expected_m=64)
             for kind, g in (("zeros", 2), ("ones", 3), ("full", 2), ("random", 4),
                             ("beyond", 6))]
    if small:
        return cases
    for g, expected in ((32, 192), (6, 1024), (32, 20), (6, 20)):
        for n, k in DG_GROUPED_NK:
            cases.append(Case("masked", "DeepGEMM", 4096, n, k, groups=scaled(expected, g, rng),
                              expected_m=expected))
    return cases


DG_K_GROUPED = [(8, 768, 2048, 128), (4, 4096, 7168, 8192), (4, 7168, 2048, 8192),
                (8, 4096, 7168, 4096), (8, 7168, 2048, 4096), (16, 4096, 7168, 2048),
                (16, 7168, 2048, 2048)]


def k_grouped_cases(small: bool, rng: random.Random) -> List[Case]:
    cases = [Case("k_grouped", "small", 136, 200, 0, c=c, groups=[64, 0, 192, 128])
             for c in ("none", "d", "separate")]
    cases += [Case("k_grouped", "all empty", 136, 200, 0, c=c, groups=[0, 0])
              for c in ("none", "separate")]
    if small:
        return cases
    for g, m, n, expected in DG_K_GROUPED:
        real = [align(max(1, int(expected * rng.uniform(0.7, 1.3))), ALIGN) for _ in range(g)]
        empty = [0 if rng.random() < 0.25 else k for k in real]
        empty[0], empty[-1] = 0, real[-1]
        single = [k if i == g // 2 else 0 for i, k in enumerate(real)]
        for name, ks in (("DeepGEMM", real), ("DeepGEMM empty groups", empty),
                         ("DeepGEMM one group", single)):
            cases.append(Case("k_grouped", name, m, n, 0, c="d", groups=ks))
    return cases


def all_cases(small: bool, rng: random.Random) -> List[Case]:
    return (normal_cases(small, rng) + m_grouped_cases(small, rng) + masked_cases(small, rng)
            + k_grouped_cases(small, rng))


# --- operands, the call, the reference ----------------------------------------------------------

@dataclass
class Built:
    """One case ready to run: ``call(buffer)`` runs the GEMM into the output view of
    ``buffer``; ``fresh()`` returns the buffer as it is before every call (NaN, or c);
    ``reference()`` the FP32 reference in the buffer's shape, of which the rows in ``valid``
    (a mask over the buffer's leading dimensions) count, the others must stay NaN."""
    call: Callable[[torch.Tensor], None]
    fresh: Callable[[], torch.Tensor]
    reference: Callable[[], torch.Tensor]
    valid: torch.Tensor
    operands: Tuple[torch.Tensor, ...] = ()


def randn(shape, device, gen, dtype=BF) -> torch.Tensor:
    return torch.randn(shape, device=device, generator=gen, dtype=torch.float32).to(dtype)


def poisoned(shape, dtype, device) -> torch.Tensor:
    return torch.full(shape, float("nan"), dtype=dtype, device=device)


def build_normal(case: Case, device, gen) -> Built:
    m, n, k = case.m, case.n, case.k
    a, b = randn((m, k), device, gen), randn((n, k), device, gen)
    dtype = BF if case.out == "bf16" else torch.float32
    pad = 8
    c = randn((m, n), device, gen, torch.float32) * 32 if case.c != "none" else None

    def reference():
        ref = torch.zeros((m + pad, n), device=device)
        ref[:m] = dgemm.bf16_gemm_reference(a, b, c)
        return ref
    # The operands as the layout gives them: [K, M] for a transposed a, [K, N] for b.
    a_arg = a if case.layout[0] == "n" else a.t().contiguous()
    b_arg = b if case.layout[1] == "t" else b.t().contiguous()
    fn = getattr(dgemm, f"bf16_gemm_{case.layout}")
    if not case.alias:
        a_arg = a_arg if case.layout[0] == "n" else a_arg.t()
        b_arg = b_arg if case.layout[1] == "t" else b_arg.t()
        fn = dgemm.bf16_gemm_nt

    def fresh():
        buf = poisoned((m + pad, n), dtype, device)
        if case.c == "d":
            buf[:m] = c
        return buf

    def call(buf):
        d = buf[:m]
        cv = {"none": None, "d": d, "separate": c}[case.c]
        fn(a_arg, b_arg, d, c=cv)

    valid = torch.zeros(m + pad, dtype=torch.bool, device=device)
    valid[:m] = True
    return Built(call, fresh, reference, valid)


def grouped_rows(tokens: List[int]) -> Tuple[List[int], List[int], int]:
    """Each expert's first row and row count, aligned to 128 rows; M_sum."""
    starts, start = [], 0
    for t in tokens:
        starts.append(start)
        start += align(t, ALIGN)
    return starts, tokens, start


def build_m_grouped(case: Case, device, gen) -> Built:
    starts, tokens, m_sum = grouped_rows(case.groups)
    g, n, k = len(tokens), case.n, case.k
    a = randn((max(m_sum, 1), k), device, gen)[:m_sum]
    w = randn((g, n, k), device, gen)
    layout = torch.full((m_sum,), -1, dtype=torch.int32)
    for e, (s, t) in enumerate(zip(starts, tokens)):
        layout[s:s + t] = e
    layout = layout.to(device)
    psum = torch.tensor([s + t for s, t in zip(starts, tokens)], dtype=torch.int32,
                        device=device)
    valid = layout >= 0
    arg = psum if case.psum else layout
    # The layout's values are checked on the device (not on fake tensors: the dry run).
    check = not is_fake(a)
    if case.layout == "nn":
        w_kn = w.transpose(1, 2).contiguous()

        def call(buf):
            dgemm.m_grouped_bf16_gemm_nn_contiguous(a, w_kn, buf, arg, use_psum_layout=case.psum,
                                                    check_grouped_layout=check)
    else:
        w_arg = w if case.layout == "nt" else w.transpose(1, 2).contiguous().transpose(1, 2)

        def call(buf):
            dgemm.m_grouped_bf16_gemm_nt_contiguous(a, w_arg, buf, arg, use_psum_layout=case.psum,
                                                    check_grouped_layout=check)

    return Built(call, lambda: poisoned((m_sum, n), BF, device),
                 lambda: dgemm.m_grouped_bf16_reference(a, w, layout), valid)


def build_masked(case: Case, device, gen,
                 masked_m: Optional[torch.Tensor] = None) -> Built:
    g, m_max, n, k = len(case.groups), case.m, case.n, case.k
    a, w = randn((g, m_max, k), device, gen), randn((g, n, k), device, gen)
    if masked_m is None:
        masked_m = torch.tensor(case.groups, dtype=torch.int32, device=device)
    rows = clamped(case.groups, m_max)
    valid = torch.arange(m_max, device=device)[None, :] < torch.tensor(rows, device=device)[:, None]

    def call(buf):
        dgemm.m_grouped_bf16_gemm_nt_masked(a, w, buf, masked_m, case.expected_m)

    return Built(call, lambda: poisoned((g, m_max, n), BF, device),
                 lambda: dgemm.m_grouped_bf16_masked_reference(a, w, rows), valid, (a, w))


def build_k_grouped(case: Case, device, gen) -> Built:
    ks, m, n = case.groups, case.m, case.n
    g, sum_k = len(ks), sum(ks)
    a, b = randn((sum_k, m), device, gen), randn((sum_k, n), device, gen)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device=device)
    c = randn((g, m, n), device, gen, torch.float32) * 32 if case.c != "none" else None

    def reference():
        ref = torch.zeros((g + 1, m, n), device=device)
        ref[:g] = dgemm.k_grouped_bf16_reference(a, b, ks, c)
        return ref

    def fresh():
        buf = poisoned((g + 1, m, n), torch.float32, device)
        if case.c == "d":
            buf[:g] = c
        return buf

    def call(buf):
        d = buf[:g]
        cv = {"none": None, "d": d, "separate": c}[case.c]
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, cv)

    valid = torch.zeros(g + 1, dtype=torch.bool, device=device)
    valid[:g] = True
    return Built(call, fresh, reference, valid)


BUILDERS = {"normal": build_normal, "m_grouped": build_m_grouped, "masked": build_masked,
            "k_grouped": build_k_grouped}


# --- checks --------------------------------------------------------------------------------------

def check_output(buf: torch.Tensor, ref: torch.Tensor, valid: torch.Tensor) -> List[str]:
    """Problems of a result: the valid rows close to the reference and finite, every other row
    still NaN. [] when it is right."""
    problems = []
    if valid.any():
        got = buf[valid].float()
        diff = calc_diff(got, ref[valid])
        if not torch.isfinite(got).all():
            problems.append("non-finite values")
        elif not diff < THRESHOLD:
            problems.append(f"calc_diff={diff:.2e}")
    if (~valid).any() and not torch.isnan(buf[~valid].float()).all():
        problems.append("rows it must not write were written")
    return problems


def report(name: str, detail: str, problems: List[str]) -> bool:
    print(f"{'FAIL' if problems else 'PASS'} {name}: {detail} {' '.join(problems)}".rstrip(),
          flush=True)
    return not problems


def run_case(case: Case, repeats: int, gen) -> bool:
    label = f"{case.kind} {case.name}"
    built = buf = again = None
    try:
        built = BUILDERS[case.kind](case, "cuda", gen)
        buf = built.fresh()
        built.call(buf)
        torch.cuda.synchronize()
        problems = check_output(buf, built.reference(), built.valid)
        for _ in range(repeats):
            again = built.fresh()
            built.call(again)
            if not same_bits(again, buf):
                problems.append("non-deterministic")
                break
        torch.cuda.synchronize()
    except Exception as e:  # a failure of one case must not hide the others
        problems = [f"raised {type(e).__name__}: {e}"]
    finally:
        built = buf = again = None
        torch.cuda.empty_cache()
    return report(label, case.describe(), problems)


def run_graph(small: bool, gen, rng: random.Random) -> bool:
    """One masked call captured into a CUDA graph; masked_m changed in place between replays
    (the host never reads it)."""
    g, m_max = 4, 256 if small else 1024
    case = Case("masked", "graph", m_max, 512 if small else 4096, 256 if small else 7168,
                groups=[0] * g, expected_m=128)
    masked_m = torch.zeros(g, dtype=torch.int32, device="cuda")
    built = build_masked(case, "cuda", gen, masked_m)
    d = built.fresh()
    built.call(d)  # loads the runtime and the kernel before the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        built.call(d)
    ok = True
    counts_rng = torch.Generator().manual_seed(rng.randrange(2**31))
    for kind in ("random", "full", "zeros", "beyond", "ones", "random"):
        counts = masked_counts(kind, g, m_max, counts_rng)
        d.fill_(float("nan"))
        masked_m.copy_(torch.tensor(counts, dtype=torch.int32))
        graph.replay()
        torch.cuda.synchronize()
        # The reference of these counts on the same operands.
        rows = clamped(counts, m_max)
        valid = (torch.arange(m_max, device="cuda")[None, :]
                 < torch.tensor(rows, device="cuda")[:, None])
        ref = dgemm.m_grouped_bf16_masked_reference(*built.operands, rows)
        replayed = Case("masked", "graph", m_max, case.n, case.k, groups=counts,
                        expected_m=case.expected_m)
        ok &= report("graph replay", replayed.describe(), check_output(d, ref, valid))
    return ok


# --- dry run -------------------------------------------------------------------------------------

def dry_run() -> bool:
    """No GPU: every case's call on fake CUDA tensors of its real shapes (the argument checks
    accept it, nothing is allocated), and the host-side checks on a small CPU case: a
    reference stands in for the kernel's output, poisoned where the kernel must not write, and
    the checks must accept it and reject a written poisoned row and a wrong value."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    rng = random.Random(3)
    cases = all_cases(False, rng)
    for case in cases:
        with FakeTensorMode():
            built = BUILDERS[case.kind](case, "cuda", None)
            built.call(built.fresh())
    gen = torch.Generator().manual_seed(0)
    case = Case("masked", "dry", 24, 16, 64, groups=[5, 0, 24], expected_m=8)
    a, w = randn((3, 24, 64), "cpu", gen), randn((3, 16, 64), "cpu", gen)
    rows = clamped(case.groups, 24)
    ref = dgemm.m_grouped_bf16_masked_reference(a, w, rows)
    valid = torch.arange(24)[None, :] < torch.tensor(rows)[:, None]
    d = ref.to(BF)
    d[~valid] = float("nan")
    assert check_output(d, ref, valid) == [], "the checks reject a right result"
    d[0, 5] = 0
    assert "rows it must not write were written" in check_output(d, ref, valid)
    d[0, 5] = float("nan")
    d[0, 0] = -d[0, 0] * 4
    assert any(p.startswith("calc_diff") for p in check_output(d, ref, valid))
    assert clamped([-5, 300, INT32_MAX, 7], 256) == [0, 256, 256, 7]
    print(f"dry run: {len(cases)} cases (+ the graph case) pass the argument checks on fake "
          f"tensors; host-side checks pass")
    return True


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--small", action="store_true")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", choices=["normal", "m_grouped", "masked", "graph", "k_grouped"])
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    if args.dry_run:
        return 0 if dry_run() else 1
    torch.backends.cuda.matmul.allow_tf32 = False
    seed = int(time.time())
    print(f"seed {seed}; threshold calc_diff < {THRESHOLD}", flush=True)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    rng = random.Random(seed)
    ok = True
    for kind, cases in (("normal", normal_cases), ("m_grouped", m_grouped_cases),
                        ("masked", masked_cases), ("k_grouped", k_grouped_cases)):
        if args.only not in (None, kind):
            continue
        for case in cases(args.small, rng):
            ok &= run_case(case, args.repeats, gen)
        if kind == "masked" and args.only is None:
            ok &= run_graph(args.small, gen, rng)
    if args.only == "graph":
        ok &= run_graph(args.small, gen, rng)
    print("check_bf16: " + ("every case PASS" if ok else "FAILED"), flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
