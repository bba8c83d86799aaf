"""CPU tests of the m-grouped API: layout helpers, casts, reference, argument checks."""

import pytest
import torch

import dgemm
from dgemm import m_grouped


def test_alignment_and_tma_sizes():
    assert dgemm.get_mk_alignment_for_contiguous_layout() == 128
    assert dgemm.get_tma_aligned_size(5, 4) == 8
    assert dgemm.get_tma_aligned_size(8, 4) == 8
    assert dgemm.get_tma_aligned_size(3, 1) == 16
    with pytest.raises(ValueError, match="element_size"):
        dgemm.get_tma_aligned_size(3, 3)


def test_mn_major_tma_aligned_tensor_keeps_values_and_aligns_strides():
    x = torch.randn(6, 3)
    y = dgemm.get_mn_major_tma_aligned_tensor(x)
    assert torch.equal(x, y)
    assert y.stride() == (1, 8)
    # Already in the layout: no copy.
    assert dgemm.get_mn_major_tma_aligned_tensor(y).data_ptr() == y.data_ptr()
    z = torch.randn(2, 5, 3)
    w = dgemm.get_mn_major_tma_aligned_tensor(z)
    assert torch.equal(z, w) and w.stride()[1:] == (1, 8)


def test_casts_round_trip_within_fp8_precision():
    torch.manual_seed(0)
    x = torch.randn(64, 256)
    fp8, sf = dgemm.per_token_cast_to_fp8(x)
    assert fp8.dtype == torch.float8_e4m3fn and sf.shape == (64, 2)
    back = (fp8.float().view(64, 2, 128) * sf.unsqueeze(2)).view(64, 256)
    assert (back - x).abs().max() <= x.abs().max() / 8
    w = torch.randn(200, 384)
    fp8, sf = dgemm.per_block_cast_to_fp8(w)
    assert fp8.shape == (200, 384) and sf.shape == (2, 3)
    sf_full = sf.repeat_interleave(128, 0)[:200].repeat_interleave(128, 1)
    assert ((fp8.float() * sf_full) - w).abs().max() <= w.abs().max() / 8


def _operands(tokens, n, k):
    torch.manual_seed(1)
    rows = []
    for e, t in enumerate(tokens):
        rows += [e] * t + [-1] * ((t + 127) // 128 * 128 - t)
    layout = torch.tensor(rows, dtype=torch.int32)
    m = layout.numel()
    x_fp8, sfa = dgemm.per_token_cast_to_fp8(torch.randn(m, k))
    g = len(tokens)
    w_fp8 = torch.empty(g, n, k, dtype=torch.float8_e4m3fn)
    sfb = torch.empty(g, (n + 127) // 128, k // 128)
    for e in range(g):
        w_fp8[e], sfb[e] = dgemm.per_block_cast_to_fp8(torch.randn(n, k))
    return (x_fp8, sfa), (w_fp8, sfb), layout


def test_reference_is_the_dequantized_product_per_expert():
    a, b, layout = _operands([100, 0, 28], 136, 256)
    ref = dgemm.m_grouped_reference(a, b, layout)
    x = a[0].float() * a[1].repeat_interleave(128, 1)
    row = 130  # expert 2's third row (expert 0 has 128 rows with padding)
    assert layout[row] == 2
    sfb = b[1][2].repeat_interleave(128, 0)[:136].repeat_interleave(128, 1)
    expect = x[row] @ (b[0][2].float() * sfb).t()
    assert torch.allclose(ref[row], expect, rtol=1e-5, atol=1e-4)
    assert torch.all(ref[layout < 0] == 0)


def _call(**over):
    a, b, layout = _operands([128, 64], 128, 256)
    args = dict(a=a, b=b, d=torch.empty(layout.numel(), 128, dtype=torch.bfloat16),
                grouped_layout=layout)
    args.update(over)
    dgemm.m_grouped_fp8_gemm_nt_contiguous(**args)


@pytest.mark.parametrize("over, exc, match", [
    (dict(recipe=(1, 1, 128)), ValueError, "recipe must be None or"),
    (dict(use_psum_layout=True), ValueError,
     r"grouped_layout must have shape \[2\] \(\[G\] prefix sums with use_psum_layout=True\)"),
    (dict(use_psum_layout=1), TypeError, "use_psum_layout must be a bool"),
    (dict(expected_m_for_psum_layout=64), ValueError,
     "expected_m_for_psum_layout needs use_psum_layout=True"),
    (dict(use_psum_layout=True, grouped_layout=torch.tensor([128, 192], dtype=torch.int32),
          expected_m_for_psum_layout=0), ValueError, "expected_m_for_psum_layout must be >= 1"),
    (dict(d=torch.empty(256, 128, dtype=torch.float32)), TypeError, "d must be torch.bfloat16"),
    (dict(d=torch.empty(256, 120, dtype=torch.bfloat16)), ValueError,
     r"d must have shape \[256, 128\]"),
    (dict(grouped_layout=torch.zeros(256, dtype=torch.int64)), TypeError,
     "grouped_layout must be torch.int32"),
    (dict(grouped_layout=torch.zeros(255, dtype=torch.int32)), ValueError,
     r"grouped_layout must have shape \[256\] \(\[M_sum\], one expert per row\), got \[255\]"),
    (dict(a=(torch.zeros(256, 256), torch.zeros(256, 2))), TypeError,
     r"a\[0\] must be torch.float8_e4m3fn"),
    (dict(b=None), TypeError, "b must be a pair"),
])
def test_bad_arguments_name_the_argument(over, exc, match):
    with pytest.raises(exc, match=match):
        _call(**over)


def test_cpu_tensors_are_refused_before_any_launch():
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        _call()
    with pytest.raises(ValueError, match="must be a CUDA tensor"):
        _call(use_psum_layout=True, grouped_layout=torch.tensor([128, 192], dtype=torch.int32))


def test_contiguous_op_traces_with_fake_tensors_in_both_layouts():
    from torch._subclasses.fake_tensor import FakeTensorMode

    a, b, layout = _operands([128, 64], 128, 256)
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake = mode.from_tensor
        for psum, gl in ((False, layout), (True, torch.tensor([128, 192], dtype=torch.int32))):
            d = torch.empty(layout.numel(), 128, dtype=torch.bfloat16)
            # CPU fake tensors: every rule but the devices' holds, so the device rule is
            # the one that fires, after the shapes and dtypes were accepted.
            with pytest.raises(ValueError, match="must be a CUDA tensor"):
                torch.ops.dgemm.m_grouped_fp8_gemm_nt_contiguous(
                    fake(a[0]), fake(dgemm.get_mn_major_tma_aligned_tensor(a[1])),
                    fake(b[0]), fake(b[1]), fake(d), fake(gl), psum, 0)


@pytest.mark.parametrize("tokens", [[100, 0, 37, 128], [128], [0, 5], [300, 1], [0]])
def test_psum_to_grouped_layout_matches_the_padded_per_row_layout(tokens):
    psum, start, rows = [], 0, []
    for e, t in enumerate(tokens):
        psum.append(start + t)
        padded = (t + 127) // 128 * 128
        rows += [e] * t + [-1] * (padded - t)
        start += padded
    m = max(len(rows), 1)
    rows += [-1] * (m - len(rows))
    got = dgemm.psum_to_grouped_layout(torch.tensor(psum, dtype=torch.int32), m)
    assert got.tolist() == rows


def test_transform_sf_into_required_layout_per_token_is_mn_major_and_aligned():
    sf = torch.randn(130, 4)  # sfa of M = 130, K = 512
    out = dgemm.transform_sf_into_required_layout(sf, 130, 512, (1, 128, 128), is_sfa=True)
    assert torch.equal(out, sf)
    assert out.stride() == (1, 132)
    # The 1D1D recipe's sfb is per token too; with groups, each group MN-major.
    g = torch.randn(3, 130, 4)
    out = dgemm.transform_sf_into_required_layout(g, 130, 512, (1, 1, 128), num_groups=3)
    assert torch.equal(out, g) and out.stride() == (4 * 132, 1, 132)


def test_transform_sf_into_required_layout_block_scales_stay_row_major():
    sf = torch.randn(2, 4, 3).transpose(1, 2)  # [G, ceil(N/128), K/128], not contiguous
    out = dgemm.transform_sf_into_required_layout(sf, 384, 512, (1, 128, 128), num_groups=2)
    assert torch.equal(out, sf) and out.is_contiguous()


@pytest.mark.parametrize("kwargs,match", [
    (dict(sf=torch.zeros(2, 4, dtype=torch.int32), mn=2, k=512, recipe=(1, 128, 128),
          is_sfa=True), "float32 on SM90"),
    (dict(sf=torch.zeros(2, 4), mn=2, k=512, recipe=(1, 64, 128)), r"granularity \(64, 128\)"),
    (dict(sf=torch.zeros(3, 4), mn=2, k=512, recipe=(1, 128, 128), is_sfa=True),
     r"shape \[2, 4\]"),
    (dict(sf=torch.zeros(2, 4), mn=2, k=512, recipe=(1, 128, 128), is_sfa=True, num_groups=1),
     "3-D"),
])
def test_transform_sf_into_required_layout_refuses(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dgemm.transform_sf_into_required_layout(**kwargs)
