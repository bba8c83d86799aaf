"""The layout helpers and the reference, on CPU tensors."""

import pytest

torch = pytest.importorskip("torch")

import dgemm  # noqa: E402
from dgemm import _checks  # noqa: E402
from dgemm.layout import SF_MIN  # noqa: E402
from dgemm.testing import calc_diff, same_bits  # noqa: E402

F8 = torch.float8_e4m3fn


def _randn(*shape, seed=0, dtype=torch.bfloat16, scale=1.0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(dtype)


def _dequantize(fp8, sf, gran_k=128):
    return fp8.double() * sf.double().repeat_interleave(gran_k, dim=0)


# ---------------------------------------------------------------- the cast


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_cast_round_trip_error_is_within_fp8_precision(dtype):
    x = _randn(512, 96, dtype=dtype, scale=3.0)
    fp8, sf = dgemm.per_channel_cast_to_fp8(x)
    assert fp8.dtype == F8 and fp8.shape == (512, 96)
    assert sf.dtype == torch.float32 and sf.shape == (4, 96)
    err = (_dequantize(fp8, sf) - x.double()).abs()
    # e4m3: 3 mantissa bits, so half an ulp is 2^-4 of the value for normals; the
    # subnormal step is 2^-9 of the scale.
    bound = torch.maximum(x.double().abs() * 2**-4, sf.double().repeat_interleave(128, 0) * 2**-10)
    assert bool((err <= bound * (1 + 1e-6)).all())
    # Each block's largest magnitude maps onto the FP8 maximum.
    amax = fp8.float().abs().view(4, 128, 96).amax(dim=1)
    assert torch.equal(amax, torch.full_like(amax, 448.0))


def test_cast_defaults_match_deepgemm_per_channel_cast_bitwise():
    x = _randn(256, 40, seed=1)
    x[:128, 3] = 0            # an all-zero channel block
    x[128:, 5] *= 1e-6        # a block below DeepGEMM's amax floor
    fp8, sf = dgemm.per_channel_cast_to_fp8(x)
    # DeepGEMM: amax floored at 1e-4, sf = amax / 448, fp8 = x * (1 / sf).
    view = x.view(2, 128, 40)
    want_sf = view.abs().float().amax(dim=1).clamp(1e-4) / 448.0
    want_fp8 = (view * (1.0 / want_sf.unsqueeze(1))).to(F8).view(256, 40)
    assert same_bits(sf, want_sf)
    assert torch.equal(fp8.view(torch.uint8), want_fp8.view(torch.uint8))
    assert sf[0, 3].item() == torch.tensor(1e-4 / 448.0).item()


@pytest.mark.parametrize("sf_zero", [1.0, 1e-4, 1e-8, 1e-30])
def test_cast_with_the_seed_reports_settings(sf_zero):
    x = _randn(256, 16, seed=2, scale=1e-7)
    x[128:, 0] = 0
    fp8, sf = dgemm.per_channel_cast_to_fp8(x, amax_floor=0.0, sf_zero=sf_zero)
    # The report: sf = amax / 448 with no floor; 0 -> sf_val; clamped at 1e-30.
    view = x.view(2, 128, 16)
    raw = view.abs().float().amax(dim=1) / 448.0
    want_sf = torch.where(raw == 0, torch.full_like(raw, sf_zero), raw).clamp_min(1e-30)
    want_fp8 = (view * (1.0 / want_sf.unsqueeze(1))).to(F8).view(256, 16)
    assert same_bits(sf, want_sf)
    assert torch.equal(fp8.view(torch.uint8), want_fp8.view(torch.uint8))
    assert sf[1, 0].item() == torch.tensor(sf_zero, dtype=torch.float32).item()
    assert bool((fp8[128:, 0].float() == 0).all())


def test_cast_clamps_tiny_scales():
    x = torch.zeros(128, 4)
    _, sf = dgemm.per_channel_cast_to_fp8(x, amax_floor=0.0, sf_zero=1e-40)
    assert bool((sf == torch.tensor(SF_MIN, dtype=torch.float32)).all())


def test_cast_ue8m0_scales_are_powers_of_two_rounded_up():
    x = _randn(256, 32, seed=3)
    fp8, sf = dgemm.per_channel_cast_to_fp8(x, True)
    _, raw = dgemm.per_channel_cast_to_fp8(x)
    mantissa = sf.view(torch.int32) & 0x7FFFFF
    assert bool((mantissa == 0).all())
    assert bool((sf >= raw).all()) and bool((sf < 2 * raw).all())
    assert bool((fp8.float().abs() <= 448).all())


def test_cast_gran_k():
    fp8, sf = dgemm.per_channel_cast_to_fp8(_randn(96, 8), gran_k=32)
    assert fp8.shape == (96, 8) and sf.shape == (3, 8)


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(x=torch.zeros(128)), ValueError, r"x must have 2 dimensions"),
    (dict(x=torch.zeros(100, 4)), ValueError, r"x.shape\[0\] = 100 tokens must be a multiple of gran_k = 128"),
    (dict(x=torch.zeros(128, 4, dtype=torch.int32)), TypeError, r"x must be a float16/bfloat16/float32/float64"),
    (dict(x=torch.zeros(128, 4, dtype=F8)), TypeError, r"x must be a float16/bfloat16/float32/float64"),
    (dict(x=[[0.0]]), TypeError, r"x must be a torch.Tensor"),
    (dict(x=torch.zeros(128, 4), sf_zero=0.0), ValueError, r"sf_zero must be a finite float > 0"),
    (dict(x=torch.zeros(128, 4), sf_zero=float("inf")), ValueError, r"sf_zero must be a finite float > 0"),
    (dict(x=torch.zeros(128, 4), amax_floor=-1.0), ValueError, r"amax_floor must be a finite float >= 0"),
    (dict(x=torch.zeros(128, 4), gran_k=0), ValueError, r"gran_k must be a positive int"),
    (dict(x=torch.zeros(128, 4), use_ue8m0=1), TypeError, r"use_ue8m0 must be a bool"),
])
def test_cast_argument_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        dgemm.per_channel_cast_to_fp8(**kwargs)


# ---------------------------------------------------------------- packing


def _naive_pack(x, ks):
    t, ch = x.shape
    out = [None] * (t * ch)
    start = 0
    for k in ks:
        for c in range(ch):
            for j in range(k):
                out[ch * start + c * k + j] = x[start + j, c].item()
        start += k
    return out


@pytest.mark.parametrize("ks", [[128, 0, 256, 128], [3, 5, 0, 1], [0, 7]])
def test_pack_matches_a_naive_loop(ks):
    x = torch.arange(sum(ks) * 6, dtype=torch.float32).view(sum(ks), 6)
    packed = dgemm.pack_k_grouped_kmajor(x, ks)
    assert packed.shape == (sum(ks) * 6,)
    assert packed.tolist() == _naive_pack(x, ks)


def test_pack_fp8_keeps_the_bits():
    ks = [128, 256]
    fp8, _ = dgemm.per_channel_cast_to_fp8(_randn(384, 12, seed=4))
    packed = dgemm.pack_k_grouped_kmajor(fp8, ks)
    assert packed.dtype == F8
    assert packed.view(torch.uint8).tolist() == _naive_pack(fp8.view(torch.uint8), ks)


def test_pack_argument_errors():
    x = torch.zeros(256, 4)
    with pytest.raises(ValueError, match=r"sum\(ks\) = 128 does not match fp8.shape\[0\] = 256"):
        dgemm.pack_k_grouped_kmajor(x, [128])
    with pytest.raises(ValueError, match=r"ks\[0\] = -128 is negative"):
        dgemm.pack_k_grouped_kmajor(x, [-128, 384])
    with pytest.raises(TypeError, match=r"ks\[1\] must be an int"):
        dgemm.pack_k_grouped_kmajor(x, [128, 128.0])
    with pytest.raises(TypeError, match=r"ks must be a list or tuple of ints"):
        dgemm.pack_k_grouped_kmajor(x, 256)


def test_make_operand_is_pack_of_cast_with_transposed_scales():
    ks = [128, 0, 256]
    x = _randn(384, 20, seed=5)
    packed, sf_t = dgemm.make_k_grouped_operand(x, ks)
    fp8, sf = dgemm.per_channel_cast_to_fp8(x)
    assert torch.equal(packed.view(torch.uint8), dgemm.pack_k_grouped_kmajor(fp8, ks).view(torch.uint8))
    assert sf_t.shape == (20, 3) and sf_t.stride() == (1, 20)
    assert same_bits(sf_t, sf.T)


def test_make_operand_passes_the_gemm_layout_rules():
    ks = [256, 128]
    packed, sf_t = dgemm.make_k_grouped_operand(_randn(384, 16), ks)
    from dgemm.gemm import _describe
    _checks.check_operand(_describe("a", packed), _describe("sfa", sf_t), 16, "M", sum(ks))


def test_make_operand_forwards_the_zero_channel_settings():
    x = torch.zeros(128, 8)
    _, sf_t = dgemm.make_k_grouped_operand(x, [128], amax_floor=0.0, sf_zero=1e-8)
    assert bool((sf_t == torch.tensor(1e-8, dtype=torch.float32)).all())


def test_make_operand_argument_errors():
    with pytest.raises(ValueError, match=r"ks\[0\] = 64 is not a multiple of 128"):
        dgemm.make_k_grouped_operand(torch.zeros(192, 4), [64, 128])
    with pytest.raises(ValueError, match=r"sum\(ks\) = 128 does not match x.shape\[0\] = 256"):
        dgemm.make_k_grouped_operand(torch.zeros(256, 4), [128])


# ---------------------------------------------------------------- the reference


def _einsum_reference(xa, xb, ks, c=None):
    """float64 einsum over the fully dequantized token-major operands."""
    fa, sa = dgemm.per_channel_cast_to_fp8(xa)
    fb, sb = dgemm.per_channel_cast_to_fp8(xb)
    da, db = _dequantize(fa, sa), _dequantize(fb, sb)
    out = torch.zeros(len(ks), xa.shape[1], xb.shape[1], dtype=torch.float64)
    start = 0
    for g, k in enumerate(ks):
        out[g] = torch.einsum("km,kn->mn", da[start:start + k], db[start:start + k])
        start += k
    return out if c is None else out + c.double()


def _operands(ks, m, n, seed=6):
    xa = _randn(sum(ks), m, seed=seed)
    xb = _randn(sum(ks), n, seed=seed + 1, scale=0.5)
    return xa, xb, dgemm.make_k_grouped_operand(xa, ks), dgemm.make_k_grouped_operand(xb, ks)


def test_reference_float64_equals_einsum():
    ks, m, n = [256, 0, 128, 384], 16, 24
    xa, xb, a, b = _operands(ks, m, n)
    got = dgemm.k_grouped_reference(a, b, ks, m, n)
    want = _einsum_reference(xa, xb, ks)
    assert got.dtype == torch.float64 and got.shape == (4, m, n)
    assert torch.allclose(got, want, rtol=1e-12, atol=1e-12)
    assert bool((got[1] == 0).all())


def test_reference_adds_c_and_empty_groups_equal_c():
    ks, m, n = [128, 0, 256], 8, 12
    xa, xb, a, b = _operands(ks, m, n)
    c = _randn(3, m, n, seed=9, dtype=torch.float32, scale=32)
    got = dgemm.k_grouped_reference(a, b, ks, m, n, c)
    assert torch.allclose(got, _einsum_reference(xa, xb, ks, c), rtol=1e-12, atol=1e-12)
    assert torch.equal(got[1], c[1].double())


def test_reference_float32_follows_the_kernel_order_closely():
    ks, m, n = [256, 128, 0, 512], 32, 16
    _, _, a, b = _operands(ks, m, n)
    c = _randn(4, m, n, seed=10, dtype=torch.float32)
    r32 = dgemm.k_grouped_reference(a, b, ks, m, n, c, dtype=torch.float32)
    r64 = dgemm.k_grouped_reference(a, b, ks, m, n, c)
    assert r32.dtype == torch.float32
    assert calc_diff(r32, r64) < 1e-12
    assert torch.equal(r32[2], c[2])


def test_reference_accepts_contiguous_scales():
    ks, m, n = [128, 256], 8, 8
    _, _, a, b = _operands(ks, m, n)
    got = dgemm.k_grouped_reference((a[0], a[1].contiguous()), (b[0], b[1].contiguous()), ks, m, n)
    assert torch.equal(got, dgemm.k_grouped_reference(a, b, ks, m, n))


def test_reference_argument_errors():
    ks, m, n = [128], 8, 8
    _, _, a, b = _operands(ks, m, n)
    with pytest.raises(ValueError, match=r"a must hold M \* sum\(ks\) = 16 \* 128"):
        dgemm.k_grouped_reference(a, b, ks, 16, n)
    with pytest.raises(ValueError, match=r"c must have shape \[G, M, N\]"):
        dgemm.k_grouped_reference(a, b, ks, m, n, torch.zeros(1, n, m + 1))
    with pytest.raises(TypeError, match=r"dtype must be torch.float32 or torch.float64"):
        dgemm.k_grouped_reference(a, b, ks, m, n, dtype=torch.float16)
    with pytest.raises(TypeError, match=r"a must be a pair"):
        dgemm.k_grouped_reference(a[0], b, ks, m, n)


def test_calc_diff():
    x = _randn(8, 8, dtype=torch.float32)
    assert calc_diff(x, x) == pytest.approx(0.0, abs=1e-15)
    assert calc_diff(x, -x) == pytest.approx(2.0)
    assert calc_diff(torch.zeros(3), torch.zeros(3)) == 0.0
