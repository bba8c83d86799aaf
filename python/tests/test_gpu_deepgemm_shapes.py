"""DeepGEMM's k-grouped contiguous test (tests/test_fp8.py, tests/generators.py), on our kernel.

The same shapes: (num_groups, M, N, expected K per group), the first with many
small groups. K_g is drawn in [0.7, 1.3] x expected and rounded up to 128; one
variant sets a random group's K_g to 0. Operands are the per-channel FP8 casts
of bf16 normals; c is separate from d (d starts as NaN, so an unwritten element
shows). Passing means DeepGEMM's metric 1 - 2 sum(x*y) / sum(x*x + y*y) < 1e-3
against the FP32 reference of the scaled FP8 products (dgemm.k_grouped_reference)
and against the unquantized bf16 product (DeepGEMM's own reference), and an
empty group's d equal to its c bit for bit (a third of that c is -0.0, which
c + 0 would turn into +0.0), with a separate c and in place.
"""

import random

import pytest

torch = pytest.importorskip("torch")

import dgemm  # noqa: E402
from dgemm.testing import calc_diff, same_bits  # noqa: E402

pytestmark = pytest.mark.gpu

SHAPES = [
    (8, 768, 2048, 128),
    (4, 4096, 7168, 8192), (4, 7168, 2048, 8192),    # EP64
    (8, 4096, 7168, 4096), (8, 7168, 2048, 4096),    # EP32
    (16, 4096, 7168, 2048), (16, 7168, 2048, 2048),  # EP16
]


def _align(x, y):
    return (x + y - 1) // y * y


@pytest.mark.parametrize("empty_group", [False, True], ids=["all-groups", "one-empty-group"])
@pytest.mark.parametrize("num_groups,m,n,expected_k", SHAPES,
                         ids=[f"G{g}-M{m}-N{n}-K{k}" for g, m, n, k in SHAPES])
def test_k_grouped_matches_reference(num_groups, m, n, expected_k, empty_group, real_runtime):
    # A str seed: the same K_g on every run and machine.
    rng = random.Random(f"{num_groups}-{m}-{n}-{expected_k}-{empty_group}")
    torch.manual_seed(rng.randrange(2**31))
    ks = [_align(max(1, int(expected_k * rng.uniform(0.7, 1.3))), 128) for _ in range(num_groups)]
    empty = rng.randrange(num_groups) if empty_group else None
    if empty is not None:
        ks[empty] = 0
    total_k = sum(ks)

    x_a = torch.randn(total_k, m, device="cuda", dtype=torch.bfloat16)
    x_b = torch.randn(total_k, n, device="cuda", dtype=torch.bfloat16)
    a = dgemm.make_k_grouped_operand(x_a, ks)
    b = dgemm.make_k_grouped_operand(x_b, ks)
    c = torch.randn(num_groups, m, n, device="cuda") * 32
    if empty is not None:
        # -0.0 tells a copy of c from c + 0 (+0.0).
        c[empty].view(-1)[::3] = -0.0
    d = torch.full_like(c, float("nan"))
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")

    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, c=c)

    reference = dgemm.k_grouped_reference(a, b, ks, m, n, c, dtype=torch.float32)
    unquantized = c.clone()
    start = 0
    for g, k in enumerate(ks):
        unquantized[g] += x_a[start:start + k].float().T @ x_b[start:start + k].float()
        start += k
    diff = calc_diff(d, reference)
    assert diff < 1e-3, f"ks={ks}: calc_diff vs FP8 reference {diff:.3e}"
    diff = calc_diff(d, unquantized)
    assert diff < 1e-3, f"ks={ks}: calc_diff vs unquantized product {diff:.3e}"
    if empty is not None:
        assert same_bits(d[empty], c[empty]), f"ks={ks}: empty group {empty} is not c"
        # In place (c is d), as the wgrad accumulates: the same sums, and the
        # empty group left as it was.
        d_in_place = c.clone()
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d_in_place, ks, ks_tensor, c=d_in_place)
        diff = calc_diff(d_in_place, reference)
        assert diff < 1e-3, f"ks={ks}: in place, calc_diff vs FP8 reference {diff:.3e}"
        assert same_bits(d_in_place[empty], c[empty]), \
            f"ks={ks}: in place, empty group {empty} is not c"


@pytest.mark.parametrize("in_place", [False, True], ids=["separate-c", "in-place"])
@pytest.mark.parametrize("num_groups,m,n,expected_k", SHAPES,
                         ids=[f"G{g}-M{m}-N{n}-K{k}" for g, m, n, k in SHAPES])
def test_kernel_info_names_a_kernel_without_spills(num_groups, m, n, expected_k, in_place,
                                                   real_runtime):
    ks = [expected_k] * num_groups
    info = dgemm.kernel_info(m, n, ks, in_place=in_place)
    assert info["entry"].startswith("dgemm_kgrouped_fp8_1d1d_bm")
    if not in_place:
        assert "_ip" not in info["entry"] and "_red" not in info["entry"]
    assert info["threads"] in (256, 384, 512)
    assert 0 < info["registers"] * info["threads"] <= 65536
    assert info["local_bytes"] == 0, info
    assert info["spill_store_bytes"] in (-1, 0) and info["spill_load_bytes"] in (-1, 0), info
    props = torch.cuda.get_device_properties(0)
    assert 1 <= info["grid_x"] <= props.multi_processor_count
    assert 0 < info["dynamic_smem_bytes"] <= 232448
