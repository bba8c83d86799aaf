"""CPU tests of the masked and normal FP8 GEMMs: references, argument checks, and the custom
ops under FakeTensorMode (fake CUDA tensors need no device) and on meta tensors."""

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op needs torch >= 2.4", allow_module_level=True)

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import dgemm  # noqa: E402
from dgemm import masked, normal  # noqa: E402

F8 = torch.float8_e4m3fn


def masked_args(g=2, m_max=96, n=256, k=256, device="cpu"):
    kb = k // 128
    a = (torch.empty(g, m_max, k, dtype=F8, device=device),
         torch.empty(g, m_max, kb, device=device))
    b = (torch.empty(g, n, k, dtype=F8, device=device),
         torch.empty(g, (n + 127) // 128, kb, device=device))
    d = torch.empty(g, m_max, n, dtype=torch.bfloat16, device=device)
    masked_m = torch.empty(g, dtype=torch.int32, device=device)
    return a, b, d, masked_m


def normal_args(m=100, n=256, k=256, device="cpu", recipe=None):
    kb = k // 128
    a = (torch.empty(m, k, dtype=F8, device=device), torch.empty(m, kb, device=device))
    if recipe == (1, 1, 128):
        b = (torch.empty(n, k, dtype=F8, device=device), torch.empty(n, kb, device=device))
        d = torch.empty(m, n, device=device)
    else:
        b = (torch.empty(n, k, dtype=F8, device=device),
             torch.empty((n + 127) // 128, kb, device=device))
        d = torch.empty(m, n, dtype=torch.bfloat16, device=device)
    return a, b, d


def quantized(shape_x, shape_w, seed=0):
    torch.manual_seed(seed)
    x, sfa = dgemm.per_token_cast_to_fp8(torch.randn(*shape_x))
    w, sfb = dgemm.per_block_cast_to_fp8(torch.randn(*shape_w))
    return (x, sfa), (w, sfb)


# --- references ---------------------------------------------------------------------------

def test_masked_reference_zeroes_rows_past_masked_m_and_clamps():
    g, m_max, n, k = 3, 40, 136, 256
    xs, sfas, ws, sfbs = [], [], [], []
    for e in range(g):
        (x, sfa), (w, sfb) = quantized((m_max, k), (n, k), seed=e)
        xs.append(x), sfas.append(sfa), ws.append(w), sfbs.append(sfb)
    a = (torch.stack(xs), torch.stack(sfas))
    b = (torch.stack(ws), torch.stack(sfbs))
    out = dgemm.m_grouped_masked_reference(a, b, torch.tensor([7, -3, 10**6], dtype=torch.int32))
    assert out.shape == (g, m_max, n)
    for e, rows in enumerate((7, 0, m_max)):
        want = normal.fp8_gemm_nt_reference((xs[e], sfas[e]), (ws[e], sfbs[e]))
        assert torch.allclose(out[e, :rows], want[:rows], rtol=1e-5, atol=1e-4)
        assert not out[e, rows:].any()


def test_normal_reference_matches_the_dequantized_product():
    (x, sfa), (w, sfb) = quantized((33, 384), (200, 384))
    out = dgemm.fp8_gemm_nt_reference((x, sfa), (w, sfb))
    xa = x.float() * sfa.repeat_interleave(128, dim=1)
    wb = w.float() * sfb.repeat_interleave(128, dim=0)[:200].repeat_interleave(128, dim=1)
    assert torch.allclose(out, xa @ wb.t(), rtol=1e-5, atol=1e-4)
    # 1D1D: per-row scales for both operands.
    sfb_rows = torch.rand(200, 3) + 0.5
    out = dgemm.fp8_gemm_nt_reference((x, sfa), (w, sfb_rows), recipe=(1, 1, 128))
    want = xa @ (w.float() * sfb_rows.repeat_interleave(128, dim=1)).t()
    assert torch.allclose(out, want, rtol=1e-5, atol=1e-4)


def test_reference_is_close_to_the_unquantized_product():
    torch.manual_seed(1)
    xf, wf = torch.randn(64, 512), torch.randn(128, 512)
    a = dgemm.per_token_cast_to_fp8(xf)
    b = dgemm.per_block_cast_to_fp8(wf)
    out = dgemm.fp8_gemm_nt_reference(a, b)
    assert dgemm.calc_diff(out, xf @ wf.t()) < 1e-3


# --- masked: argument checks --------------------------------------------------------------

def call_masked(a, b, d, masked_m, expected_m=64, **kw):
    dgemm.m_grouped_fp8_gemm_nt_masked(a, b, d, masked_m, expected_m, **kw)


def test_masked_valid_cpu_call_stops_at_the_device_rule():
    a, b, d, mm = masked_args()
    with pytest.raises(ValueError, match=r"^a\[0\] must be a CUDA tensor, got device 'cpu'"):
        call_masked(a, b, d, mm)


@pytest.mark.parametrize("change,exc,pattern", [
    (lambda a, b, d, mm: (a, b, d.float(), mm), TypeError, r"d must be torch.bfloat16"),
    (lambda a, b, d, mm: (a, b, d, mm.long()), TypeError, r"masked_m must be torch.int32"),
    (lambda a, b, d, mm: (a, b, d, mm[:1]), ValueError, r"masked_m must have shape \[2\]"),
    (lambda a, b, d, mm: (a, b, d[:, :64], mm), ValueError, r"d must have shape \[2, 96, 256\]"),
    (lambda a, b, d, mm: (a, (b[0], b[1][:, :1]), d, mm), ValueError,
     r"sfb must have shape \[2, 2, 2\]"),
    (lambda a, b, d, mm: (a, (b[0][:1], b[1]), d, mm), ValueError, r"b\[0\] must be \[G, N, K\]"),
    (lambda a, b, d, mm: ((a[0], a[1][:, :8]), b, d, mm), ValueError,
     r"sfa must have shape \[2, 96, 2\]"),
    (lambda a, b, d, mm: (a, b, d.transpose(1, 2).contiguous().transpose(1, 2), mm), ValueError,
     r"d must be contiguous"),
    (lambda a, b, d, mm: (a[0], b, d, mm), TypeError, r"a must be a pair"),
])
def test_masked_rules_name_the_argument(change, exc, pattern):
    a, b, d, mm = change(*masked_args())
    with pytest.raises(exc, match=pattern):
        call_masked(a, b, d, mm)


def test_masked_extents():
    with pytest.raises(ValueError, match=r"K must be a positive multiple of 128 .*, got 200"):
        call_masked(*masked_args(k=200))
    with pytest.raises(ValueError, match=r"N must be a positive multiple of 8"):
        call_masked(*masked_args(n=132))


@pytest.mark.parametrize("expected_m,exc,pattern", [
    (0, ValueError, r"expected_m must be >= 1, got 0"),
    (-4, ValueError, r"expected_m must be >= 1"),
    (True, TypeError, r"expected_m must be an int, got bool"),
    (64.0, TypeError, r"expected_m must be an int, got float"),
])
def test_masked_expected_m(expected_m, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call_masked(*masked_args(), expected_m=expected_m)


def test_masked_recipe_and_flags():
    with pytest.raises(ValueError, match=r"recipe must be None or \(1, 128, 128\)"):
        call_masked(*masked_args(), recipe=(1, 1, 128))
    with pytest.raises(TypeError, match=r"compiled_dims must be a str"):
        call_masked(*masked_args(), compiled_dims=3)
    with pytest.raises(TypeError, match=r"disable_ue8m0_cast must be a bool"):
        call_masked(*masked_args(), disable_ue8m0_cast=None)


def test_masked_sfa_is_aligned_before_the_op():
    # sfa in any layout is copied into the MN-major TMA-aligned one (M_max = 5: stride 8).
    a, b, d, mm = masked_args(m_max=5)
    seen = {}
    with FakeTensorMode():
        a, b, d, mm = masked_args(m_max=5, device="cuda")
        orig = masked._check_masked

        def spy(x, sfa, *rest, **kw):
            seen["strides"] = sfa.stride()
            return orig(x, sfa, *rest, **kw)

        masked._check_masked = spy
        try:
            call_masked(a, b, d, mm)
        finally:
            masked._check_masked = orig
    assert seen["strides"] == (16, 1, 8)


def test_masked_op_refuses_an_unaligned_sfa_layout():
    with FakeTensorMode():
        a, b, d, mm = masked_args(m_max=5, device="cuda")
        with pytest.raises(ValueError, match=r"sfa must be MN-major with TMA-aligned rows"):
            torch.ops.dgemm.m_grouped_fp8_gemm_nt_masked(a[0], a[1], b[0], b[1], d, mm, 64)


# --- masked: the custom op ------------------------------------------------------------------

def test_masked_schema_mutates_d_only():
    schema = str(torch.ops.dgemm.m_grouped_fp8_gemm_nt_masked.default._schema)
    assert "Tensor(a4!) d" in schema and "Tensor masked_m" in schema
    assert "int expected_m" in schema or "SymInt expected_m" in schema
    assert schema.count("!") == 1 and schema.endswith("-> ()")


def masked_then_scale(a, b, d, mm):
    dgemm.m_grouped_fp8_gemm_nt_masked(a, b, d, mm, 64)
    return d * 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_masked_compiles_with_fullgraph_on_fake_cuda_tensors(backend, compile_recording):
    with FakeTensorMode():
        a, b, d, mm = masked_args(device="cuda")
        out, graphs = compile_recording(masked_then_scale, backend, a, b, d, mm)
        assert out.shape == d.shape
    assert len(graphs) == 1 and "dgemm.m_grouped_fp8_gemm_nt_masked" in graphs[0]


def test_masked_fake_call_reports_the_rule():
    with FakeTensorMode():
        a, b, d, mm = masked_args(device="cuda")
        assert call_masked(a, b, d, mm) is None
        with pytest.raises(ValueError, match=r"masked_m must have shape \[2\]"):
            call_masked(a, b, d, torch.empty(3, dtype=torch.int32, device="cuda"))


def test_masked_meta_tensors_reach_the_fake_implementation():
    a, b, d, mm = masked_args(device="meta")
    sfa = dgemm.get_mn_major_tma_aligned_tensor(a[1])
    with pytest.raises(ValueError, match=r"^a\[0\] must be a CUDA tensor, got device 'meta'"):
        torch.ops.dgemm.m_grouped_fp8_gemm_nt_masked(a[0], sfa, b[0], b[1], d, mm, 64)
    # A wrong shape is reported before the device.
    with pytest.raises(ValueError, match=r"masked_m must have shape \[2\]"):
        torch.ops.dgemm.m_grouped_fp8_gemm_nt_masked(a[0], sfa, b[0], b[1], d, mm[:1], 64)


# --- normal ---------------------------------------------------------------------------------

def test_normal_valid_cpu_call_stops_at_the_device_rule():
    a, b, d = normal_args()
    with pytest.raises(ValueError, match=r"^a\[0\] must be a CUDA tensor, got device 'cpu'"):
        dgemm.fp8_gemm_nt(a, b, d)


def test_normal_c_must_be_none_for_bf16_d():
    a, b, d = normal_args()
    with pytest.raises(ValueError, match=r"c must be None for a BF16 d"):
        dgemm.fp8_gemm_nt(a, b, d, c=torch.empty(100, 256))


@pytest.mark.parametrize("change,exc,pattern", [
    (lambda a, b, d: (a, b, d.half()), TypeError, r"d must be torch.bfloat16 \(1D2D\)"),
    (lambda a, b, d: (a, b, d[:, :128]), ValueError, r"d must have shape \[100, 256\]"),
    (lambda a, b, d: (a, (b[0], b[1][:1]), d), ValueError, r"sfb must have shape \[2, 2\]"),
    (lambda a, b, d: (a, (b[0][:, :128], b[1]), d), ValueError, r"b\[0\] must be \[N, K\]"),
    (lambda a, b, d: ((a[0].view(torch.int8), a[1]), b, d), TypeError,
     r"a\[0\] must be torch.float8_e4m3fn"),
])
def test_normal_rules_name_the_argument(change, exc, pattern):
    a, b, d = change(*normal_args())
    with pytest.raises(exc, match=pattern):
        dgemm.fp8_gemm_nt(a, b, d)


def test_normal_fp32_d_needs_the_1d1d_recipe():
    a, b, d = normal_args(recipe=(1, 1, 128))
    with pytest.raises(ValueError, match=r"an FP32 d needs recipe=\(1, 1, 128\)"):
        dgemm.fp8_gemm_nt(a, b, d)


def test_normal_1d1d_needs_m_and_n_multiples_of_4():
    a, b, d = normal_args(m=98, recipe=(1, 1, 128))
    with pytest.raises(ValueError, match=r"recipe \(1, 1, 128\) needs M and N multiples of 4"):
        dgemm.fp8_gemm_nt(a, b, d, recipe=(1, 1, 128))


def test_normal_1d1d_runs_the_k_grouped_op_with_one_group():
    calls = []

    def spy(a, b, d, ks, ks_tensor, c=None):
        calls.append((a, b, d, ks, ks_tensor, c))

    import dgemm.gemm as gemm_module
    orig = gemm_module.k_grouped_fp8_gemm_nt_contiguous
    gemm_module.k_grouped_fp8_gemm_nt_contiguous = spy
    try:
        with FakeTensorMode():
            a, b, d = normal_args(m=100 + 4 - 100 % 4, recipe=(1, 1, 128), device="cuda")
            dgemm.fp8_gemm_nt(a, b, d, c=d, recipe=(1, 1, 128))
            dgemm.fp8_gemm_nt(a, b, d, recipe=(1, 1, 128))
    finally:
        gemm_module.k_grouped_fp8_gemm_nt_contiguous = orig
    (a0, b0, d0, ks, ks_tensor, c0), (_, _, _, _, _, c1) = calls
    assert ks == [256] and tuple(ks_tensor.shape) == (1,) and ks_tensor.dtype == torch.int32
    assert tuple(d0.shape) == (1, 104, 256) and c0 is d0 and c1 is None
    # The scales in the k-grouped kernel's layout: strides (1, M) and (1, N).
    assert a0[1].stride() == (1, 104) and b0[1].stride() == (1, 256)


def test_normal_1d1d_through_the_k_grouped_fake_implementation():
    with FakeTensorMode():
        a, b, d = normal_args(m=128, recipe=(1, 1, 128), device="cuda")
        assert dgemm.fp8_gemm_nt(a, b, d, c=d, recipe=(1, 1, 128)) is None


def test_normal_fake_and_meta():
    with FakeTensorMode():
        a, b, d = normal_args(m=1, device="cuda")
        assert dgemm.fp8_gemm_nt(a, b, d) is None
        with pytest.raises(ValueError, match=r"N must be a positive multiple of 8"):
            dgemm.fp8_gemm_nt(*normal_args(n=4, device="cuda"))
    a, b, d = normal_args(device="meta")
    sfa = dgemm.get_mn_major_tma_aligned_tensor(a[1])
    with pytest.raises(ValueError, match=r"^a\[0\] must be a CUDA tensor, got device 'meta'"):
        torch.ops.dgemm.fp8_gemm_nt(a[0], sfa, b[0], b[1], d)


def test_nn_tn_tt_are_not_provided():
    for name in ("fp8_gemm_nn", "fp8_gemm_tn", "fp8_gemm_tt"):
        assert not hasattr(dgemm, name)
