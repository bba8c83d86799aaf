"""CPU tests of the BF16 GEMMs: the references, every argument rule of each function (the
message naming the argument), the majorness read from strides, and the custom ops under
FakeTensorMode (fake CUDA tensors need no device), torch.compile(fullgraph=True) and meta
tensors. opcheck, which runs the real implementation, is in test_gpu_bf16_binding.py."""

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op needs torch >= 2.4", allow_module_level=True)

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import dgemm  # noqa: E402
from dgemm import _bf16_checks, bf16_m_grouped  # noqa: E402

BF = torch.bfloat16


def normal_args(m=104, n=64, k=256, device="cpu", d_dtype=torch.float32):
    a = torch.empty(m, k, dtype=BF, device=device)
    b = torch.empty(n, k, dtype=BF, device=device)
    d = torch.empty(m, n, dtype=d_dtype, device=device)
    return a, b, d


def contiguous_args(g=4, m=512, n=64, k=256, device="cpu", psum=False):
    a = torch.empty(m, k, dtype=BF, device=device)
    b = torch.empty(g, n, k, dtype=BF, device=device)
    d = torch.empty(m, n, dtype=BF, device=device)
    layout = torch.empty(g if psum else m, dtype=torch.int32, device=device)
    return a, b, d, layout


def masked_args(g=4, m_max=128, n=64, k=256, device="cpu"):
    a = torch.empty(g, m_max, k, dtype=BF, device=device)
    b = torch.empty(g, n, k, dtype=BF, device=device)
    d = torch.empty(g, m_max, n, dtype=BF, device=device)
    masked_m = torch.empty(g, dtype=torch.int32, device=device)
    return a, b, d, masked_m


def k_grouped_args(ks=(128, 0, 64), m=128, n=64, device="cpu"):
    a = torch.empty(sum(ks), m, dtype=BF, device=device)
    b = torch.empty(sum(ks), n, dtype=BF, device=device)
    d = torch.empty(len(ks), m, n, device=device)
    ks_tensor = torch.empty(len(ks), dtype=torch.int32, device=device)
    return a, b, d, list(ks), ks_tensor


# --- references ---------------------------------------------------------------------------

def test_references_are_fp32_products_of_the_operands():
    torch.manual_seed(0)
    a, b = torch.randn(24, 40).to(BF), torch.randn(16, 40).to(BF)
    c = torch.randn(24, 16)
    want = a.double() @ b.double().t()
    assert torch.allclose(dgemm.bf16_gemm_reference(a, b).double(), want, atol=1e-4)
    assert torch.allclose(dgemm.bf16_gemm_reference(a, b, c).double(), want + c.double(),
                          atol=1e-4)

    w = torch.randn(3, 16, 40).to(BF)
    layout = torch.tensor([0] * 8 + [-1] * 4 + [2] * 12, dtype=torch.int32)
    out = dgemm.m_grouped_bf16_reference(a, w, layout)
    assert torch.allclose(out[:8], dgemm.bf16_gemm_reference(a[:8], w[0]))
    assert not out[8:12].any()
    assert torch.allclose(out[12:], dgemm.bf16_gemm_reference(a[12:], w[2]))

    x = torch.randn(3, 10, 40).to(BF)
    out = dgemm.m_grouped_bf16_masked_reference(x, w, [4, -1, 99])
    assert torch.allclose(out[0, :4], dgemm.bf16_gemm_reference(x[0, :4], w[0]))
    assert not out[0, 4:].any() and not out[1].any()
    assert torch.allclose(out[2], dgemm.bf16_gemm_reference(x[2], w[2]))

    ka, kb = torch.randn(192, 8).to(BF), torch.randn(192, 16).to(BF)
    c3 = torch.randn(3, 8, 16)
    out = dgemm.k_grouped_bf16_reference(ka, kb, [64, 0, 128], c3)
    assert torch.allclose(out[0], ka[:64].float().t() @ kb[:64].float() + c3[0])
    assert torch.equal(out[1], c3[1])
    assert torch.allclose(out[2], ka[64:].float().t() @ kb[64:].float() + c3[2])


# --- majorness from strides ------------------------------------------------------------------

def test_major_and_stride_follow_deepgemms_rule():
    x = torch.empty(24, 72, dtype=BF)
    assert _bf16_checks.major_and_stride("a", x) == (0, 72)            # K-major
    assert _bf16_checks.major_and_stride("a", x.t()) == (1, 72)        # [72, 24], MN-major
    padded = torch.empty(24, 80, dtype=BF)[:, :72]
    assert _bf16_checks.major_and_stride("a", padded) == (0, 80)
    # A single row's stride addresses nothing.
    assert _bf16_checks.major_and_stride("a", torch.empty(100, 70, dtype=BF)[:1]) == (0, 72)
    with pytest.raises(ValueError, match=r"a must have a dimension of stride 1"):
        _bf16_checks.major_and_stride("a", x[:, ::2])
    with pytest.raises(ValueError, match=r"b's row stride \(K-major: 70 elements\) must be a "
                                         r"multiple of 8"):
        _bf16_checks.major_and_stride("b", torch.empty(24, 70, dtype=BF))
    with pytest.raises(ValueError, match=r"a's row stride \(MN-major: 20 elements\)"):
        _bf16_checks.major_and_stride("a", torch.empty(64, 20, dtype=BF).t())
    with pytest.raises(ValueError, match=r"must be at least its row length 72"):
        _bf16_checks.major_and_stride("a", torch.empty(24 * 72, dtype=BF).as_strided(
            (24, 72), (64, 1)))


# --- normal: argument checks --------------------------------------------------------------

def test_normal_valid_cpu_call_stops_at_the_device_rule():
    a, b, d = normal_args()
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'cpu'"):
        dgemm.bf16_gemm_nt(a, b, d)


@pytest.mark.parametrize("change,exc,pattern", [
    (lambda a, b, d: (a.float(), b, d), TypeError, r"^a must be torch.bfloat16"),
    (lambda a, b, d: (a, b.half(), d), TypeError, r"^b must be torch.bfloat16"),
    (lambda a, b, d: (a, b, d.half()), TypeError,
     r"^d must be torch.bfloat16 or torch.float32"),
    (lambda a, b, d: (a[None], b, d), ValueError, r"^a must have 2 dimensions"),
    (lambda a, b, d: (a, b[:, :128], d), ValueError, r"^b must be \[N, K\] with K = 256"),
    (lambda a, b, d: (a, b, d[:, :32]), ValueError, r"^d must have shape \[104, 64\]"),
    (lambda a, b, d: (a, b, d.t().contiguous().t()), ValueError, r"^d must be contiguous"),
    (lambda a, b, d: (a, b[:60], d[:, :60]), ValueError, r"^N must be a multiple of 8"),
    (lambda a, b, d: (a[:, ::2], b[:, ::2], d), ValueError,
     r"^a must have a dimension of stride 1"),
    (lambda a, b, d: (a.t().contiguous().t()[:100], b, d[:100]), ValueError,
     r"^a must be a CUDA tensor"),  # a padded MN-major view is valid
    (lambda a, b, d: (torch.empty(256, 100, dtype=BF).t(), b, d[:100]), ValueError,
     r"^a's row stride \(MN-major: 100 elements\) must be a multiple of 8"),
])
def test_normal_rules_name_the_argument(change, exc, pattern):
    a, b, d = change(*normal_args())
    with pytest.raises(exc, match=pattern):
        dgemm.bf16_gemm_nt(a, b, d)


def test_normal_c_rules():
    a, b, d = normal_args(d_dtype=BF)
    for c in (d, torch.empty(104, 64)):
        with pytest.raises(ValueError, match=r"^c must be None for a BF16 d: only an FP32 d "
                                             r"accumulates"):
            dgemm.bf16_gemm_nt(a, b, d, c=c)
    a, b, d = normal_args()
    with pytest.raises(TypeError, match=r"^c must be torch.float32 like d"):
        dgemm.bf16_gemm_nt(a, b, d, c=torch.empty(104, 64, dtype=BF))
    with pytest.raises(ValueError, match=r"^c must have d's shape \[104, 64\]"):
        dgemm.bf16_gemm_nt(a, b, d, c=torch.empty(104, 32))
    with pytest.raises(ValueError, match=r"^c must be contiguous"):
        dgemm.bf16_gemm_nt(a, b, d, c=torch.empty(64, 104).t())
    with pytest.raises(TypeError, match=r"^c must be None or a torch.Tensor"):
        dgemm.bf16_gemm_nt(a, b, d, c=1.0)


def test_normal_deepgemm_flags():
    a, b, d = normal_args()
    with pytest.raises(ValueError, match=r"^alpha must be None"):
        dgemm.bf16_gemm_nt(a, b, d, alpha=0.5)
    with pytest.raises(ValueError, match=r"^epilogue must be None"):
        dgemm.bf16_gemm_tn(a.t(), b.t(), d, epilogue=object())
    with pytest.raises(TypeError, match=r"^compiled_dims must be a str"):
        dgemm.bf16_gemm_nn(a, b.t(), d, compiled_dims=1)


def test_aliases_transpose_their_operands():
    # nn: b [K, N]; tn: a [K, M], b [K, N]; tt: a [K, M]. A wrong rank names the argument.
    a, b, d = normal_args()
    with pytest.raises(ValueError, match=r"^b must have 2 dimensions"):
        dgemm.bf16_gemm_nn(a, b[None], d)
    with pytest.raises(ValueError, match=r"^a must have 2 dimensions"):
        dgemm.bf16_gemm_tt(a[None], b, d)
    with pytest.raises(ValueError, match=r"^b must be \[N, K\] with K = 256 \(a's; in the nn "
                                         r"and tn forms b is \[K, N\]\)"):
        dgemm.bf16_gemm_nn(a, b, d)  # b given [N, K] to the nn form


# --- normal: the custom op -------------------------------------------------------------------

def spy_on(module, name):
    """Replaces module.name with a recorder of its arguments; returns (calls, restore)."""
    calls, orig = [], getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(args)
        return orig(*args, **kwargs)

    setattr(module, name, spy)
    return calls, lambda: setattr(module, name, orig)


@pytest.mark.parametrize("layout", ["nt", "nn", "tn", "tt"])
@pytest.mark.parametrize("d_dtype,c", [(BF, None), (torch.float32, None),
                                       (torch.float32, "d"), (torch.float32, "separate")])
def test_every_layout_and_output_traces_on_fake_tensors(layout, d_dtype, c):
    from dgemm import bf16
    calls, restore = spy_on(bf16, "_check_gemm")
    try:
        with FakeTensorMode():
            a, b, d = normal_args(device="cuda", d_dtype=d_dtype)
            a_arg = a if layout[0] == "n" else a.t().contiguous()
            b_arg = b if layout[1] == "t" else b.t().contiguous()
            cv = {None: None, "d": d, "separate": torch.empty_like(d)}[c]
            assert getattr(dgemm, f"bf16_gemm_{layout}")(a_arg, b_arg, d, c=cv) is None
    finally:
        restore()
    # What the op saw: a [M, K] and b [N, K] views, MN-major for the transposed forms.
    a_op, b_op, _, accumulate = calls[-1][:4]
    assert tuple(a_op.shape) == (104, 256) and tuple(b_op.shape) == (64, 256)
    assert _bf16_checks.major_and_stride("a", a_op)[0] == (layout[0] == "t")
    assert _bf16_checks.major_and_stride("b", b_op)[0] == (layout[1] == "n")
    assert accumulate == (c is not None)


def test_normal_schema_mutates_d_only():
    dgemm.bf16_gemm_nt  # imports the module that defines the op
    schema = str(torch.ops.dgemm.bf16_gemm.default._schema)
    assert "Tensor(a2!) d" in schema and "bool accumulate" in schema
    assert schema.count("!") == 1 and schema.endswith("-> ()")


def gemm_then_scale(a, b, d, c):
    dgemm.bf16_gemm_nt(a, b, d, c=c)
    return d * 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("c", ["none", "d", "separate"])
def test_normal_compiles_with_fullgraph(backend, c, compile_recording):
    with FakeTensorMode():
        a, b, d = normal_args(device="cuda")
        cv = {"none": None, "d": d, "separate": torch.empty_like(d)}[c]
        out, graphs = compile_recording(gemm_then_scale, backend, a, b.t().contiguous().t(),
                                        d, cv)
        assert out.shape == d.shape
    assert len(graphs) == 1 and "dgemm.bf16_gemm" in graphs[0]
    if c == "separate":
        assert "copy_" in graphs[0]


def test_normal_rule_fails_at_trace_time():
    torch._dynamo.reset()
    with FakeTensorMode():
        a, b, d = normal_args(device="cuda")
        with pytest.raises(Exception, match=r"N must be a multiple of 8"):
            torch.compile(gemm_then_scale, fullgraph=True, backend="aot_eager")(
                a, b[:60], d[:, :60], None)


def test_normal_meta_tensors_reach_the_fake_implementation():
    a, b, d = normal_args(device="meta")
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'meta'"):
        torch.ops.dgemm.bf16_gemm(a, b, d, False)
    with pytest.raises(ValueError, match=r"^d must have shape \[104, 64\]"):
        torch.ops.dgemm.bf16_gemm(a, b, d[:, :8], False)
    with pytest.raises(ValueError, match=r"^accumulate needs an FP32 d"):
        torch.ops.dgemm.bf16_gemm(a, b, d.to(BF), True)


def test_normal_empty_extents_pass_the_fake_implementation():
    # K = 0 (d = c or zeros) and M = 0 need no strides.
    with FakeTensorMode():
        a, b, d = normal_args(k=0, device="cuda")
        assert dgemm.bf16_gemm_nt(a, b, d) is None
        a, b, d = normal_args(m=0, device="cuda")
        assert dgemm.bf16_gemm_tn(a.t(), b.t(), d) is None


# --- m-grouped contiguous --------------------------------------------------------------------

def call_contiguous(a, b, d, layout, **kw):
    kw.setdefault("check_grouped_layout", False)
    dgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout, **kw)


def test_contiguous_valid_cpu_call_stops_at_the_device_rule():
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'cpu'"):
        call_contiguous(*contiguous_args())


@pytest.mark.parametrize("change,exc,pattern", [
    (lambda a, b, d, gl: (a.float(), b, d, gl), TypeError, r"^a must be torch.bfloat16"),
    (lambda a, b, d, gl: (a, b, d.float(), gl), TypeError, r"^d must be torch.bfloat16"),
    (lambda a, b, d, gl: (a, b, d, gl.long()), TypeError,
     r"^grouped_layout must be torch.int32"),
    (lambda a, b, d, gl: (a, b[0], d, gl), ValueError, r"^b must have 3 dimensions"),
    (lambda a, b, d, gl: (a, b[:, :, :128], d, gl), ValueError,
     r"^b must be \[G, N, K\] with K = 256"),
    (lambda a, b, d, gl: (a, b, d[:, :32], gl), ValueError, r"^d must have shape \[512, 64\]"),
    (lambda a, b, d, gl: (a, b, d, gl[:8]), ValueError,
     r"^grouped_layout must have shape \[512\] \(\[M_sum\], one expert per row\)"),
    (lambda a, b, d, gl: (a.t().contiguous().t(), b, d, gl), ValueError,
     r"^a must be contiguous"),
    (lambda a, b, d, gl: (a[:, :100], b[:, :, :100], d, gl), ValueError,
     r"^K must be a multiple of 8"),
    (lambda a, b, d, gl: (a, b[:, :60], d[:, :60], gl), ValueError,
     r"^N must be a positive multiple of 8"),
    (lambda a, b, d, gl: (a, b.transpose(0, 1).contiguous().transpose(0, 1), d, gl),
     ValueError, r"^b must be a contiguous \[G, N, K\] tensor \(K-major\) or the transpose"),
])
def test_contiguous_rules_name_the_argument(change, exc, pattern):
    a, b, d, gl = change(*contiguous_args())
    with pytest.raises(exc, match=pattern):
        call_contiguous(a, b, d, gl)


def test_contiguous_mn_major_b_needs_whole_k_blocks():
    a, b, d, gl = contiguous_args(k=200)
    b_mn = b.transpose(1, 2).contiguous().transpose(1, 2)
    with pytest.raises(ValueError, match=r"^K must be a multiple of 64 with an MN-major b"):
        call_contiguous(a, b_mn, d, gl)
    with pytest.raises(ValueError, match=r"^K must be a multiple of 64 with an MN-major b"):
        dgemm.m_grouped_bf16_gemm_nn_contiguous(a, b.transpose(1, 2).contiguous(), d, gl,
                                                check_grouped_layout=False)


def test_contiguous_psum_and_flags():
    a, b, d, gl = contiguous_args(psum=True)
    with pytest.raises(ValueError, match=r"^grouped_layout must have shape \[512\]"):
        call_contiguous(a, b, d, gl)
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor"):
        call_contiguous(a, b, d, gl, use_psum_layout=True, expected_m_for_psum_layout=100)
    with pytest.raises(ValueError, match=r"expected_m_for_psum_layout needs use_psum_layout"):
        call_contiguous(a, b, d, gl, expected_m_for_psum_layout=100)
    with pytest.raises(ValueError, match=r"expected_m_for_psum_layout must be >= 1"):
        call_contiguous(a, b, d, gl, use_psum_layout=True, expected_m_for_psum_layout=0)
    with pytest.raises(TypeError, match=r"^ensure_zero_padding must be a bool"):
        call_contiguous(a, b, d, gl, ensure_zero_padding=None)
    with pytest.raises(TypeError, match=r"^use_psum_layout must be a bool"):
        call_contiguous(a, b, d, gl, use_psum_layout=1)
    with pytest.raises(ValueError, match=r"^epilogue must be None"):
        call_contiguous(a, b, d, gl, epilogue=1)
    with pytest.raises(TypeError, match=r"^compiled_dims must be a str"):
        call_contiguous(a, b, d, gl, compiled_dims=None)


@pytest.mark.parametrize("form", ["nt", "nt with b.mT", "nn"])
@pytest.mark.parametrize("psum", [False, True])
def test_contiguous_traces_on_fake_tensors(form, psum):
    calls, restore = spy_on(bf16_m_grouped, "_check_contiguous")
    try:
        with FakeTensorMode():
            a, b, d, gl = contiguous_args(device="cuda", psum=psum)
            if form == "nn":
                dgemm.m_grouped_bf16_gemm_nn_contiguous(
                    a, b.transpose(1, 2).contiguous(), d, gl, use_psum_layout=psum,
                    check_grouped_layout=False)
            else:
                if form == "nt with b.mT":
                    b = b.transpose(1, 2).contiguous().transpose(1, 2)
                call_contiguous(a, b, d, gl, use_psum_layout=psum)
    finally:
        restore()
    b_op = calls[-1][1]
    assert tuple(b_op.shape) == (4, 64, 256)
    assert bf16_m_grouped._grouped_b_major(b_op) == (form != "nt")


def test_contiguous_schema_and_compile(compile_recording):
    dgemm.m_grouped_bf16_gemm_nt_contiguous
    schema = str(torch.ops.dgemm.m_grouped_bf16_gemm_contiguous.default._schema)
    assert "Tensor(a2!) d" in schema and schema.count("!") == 1

    def fn(a, b, d, gl):
        dgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, gl, check_grouped_layout=False)
        return d + 1

    with FakeTensorMode():
        out, graphs = compile_recording(fn, "aot_eager", *contiguous_args(device="cuda"))
        assert out.shape == (512, 64)
    assert len(graphs) == 1 and "dgemm.m_grouped_bf16_gemm_contiguous" in graphs[0]


def test_contiguous_meta_tensors():
    a, b, d, gl = contiguous_args(device="meta")
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'meta'"):
        torch.ops.dgemm.m_grouped_bf16_gemm_contiguous(a, b, d, gl, False, 0)
    with pytest.raises(ValueError, match=r"^grouped_layout must have shape \[4\]"):
        torch.ops.dgemm.m_grouped_bf16_gemm_contiguous(a, b, d, gl, True, 0)


# --- masked ------------------------------------------------------------------------------------

def test_masked_valid_cpu_call_stops_at_the_device_rule():
    a, b, d, mm = masked_args()
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'cpu'"):
        dgemm.m_grouped_bf16_gemm_nt_masked(a, b, d, mm, 64)


@pytest.mark.parametrize("change,exc,pattern", [
    (lambda a, b, d, mm: (a, b, d.float(), mm), TypeError, r"^d must be torch.bfloat16"),
    (lambda a, b, d, mm: (a, b, d, mm.long()), TypeError, r"^masked_m must be torch.int32"),
    (lambda a, b, d, mm: (a, b, d, mm[:2]), ValueError, r"^masked_m must have shape \[4\]"),
    (lambda a, b, d, mm: (a, b[:2], d, mm), ValueError, r"^b must be \[G, N, K\] with G = 4"),
    (lambda a, b, d, mm: (a, b, d[:, :64], mm), ValueError,
     r"^d must have shape \[4, 128, 64\]"),
    (lambda a, b, d, mm: (a[:, :0], b, d[:, :0], mm), ValueError,
     r"^a must be \[G, M_max, K\] with G and M_max positive"),
    (lambda a, b, d, mm: (a, b.transpose(1, 2).contiguous().transpose(1, 2), d, mm),
     ValueError, r"^b must be contiguous"),
    (lambda a, b, d, mm: (a[:, :, :100], b[:, :, :100], d, mm), ValueError,
     r"^K must be a multiple of 8"),
])
def test_masked_rules_name_the_argument(change, exc, pattern):
    a, b, d, mm = change(*masked_args())
    with pytest.raises(exc, match=pattern):
        dgemm.m_grouped_bf16_gemm_nt_masked(a, b, d, mm, 64)


@pytest.mark.parametrize("expected_m,exc,pattern", [
    (0, ValueError, r"expected_m must be >= 1, got 0"),
    (True, TypeError, r"expected_m must be an int, got bool"),
    (64.0, TypeError, r"expected_m must be an int, got float"),
])
def test_masked_expected_m(expected_m, exc, pattern):
    with pytest.raises(exc, match=pattern):
        dgemm.m_grouped_bf16_gemm_nt_masked(*masked_args(), expected_m)


def test_masked_fake_compile_and_meta(compile_recording):
    def fn(a, b, d, mm):
        dgemm.m_grouped_bf16_gemm_nt_masked(a, b, d, mm, 64)
        return d * 2

    with FakeTensorMode():
        out, graphs = compile_recording(fn, "aot_eager", *masked_args(device="cuda"))
        assert out.shape == (4, 128, 64)
    assert len(graphs) == 1 and "dgemm.m_grouped_bf16_gemm_nt_masked" in graphs[0]
    a, b, d, mm = masked_args(device="meta")
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'meta'"):
        torch.ops.dgemm.m_grouped_bf16_gemm_nt_masked(a, b, d, mm, 64)
    schema = str(torch.ops.dgemm.m_grouped_bf16_gemm_nt_masked.default._schema)
    assert "Tensor(a2!) d" in schema and schema.count("!") == 1


# --- k-grouped -----------------------------------------------------------------------------------

def test_k_grouped_valid_cpu_call_stops_at_the_device_rule():
    a, b, d, ks, kt = k_grouped_args()
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'cpu'"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt)


@pytest.mark.parametrize("change,exc,pattern", [
    (lambda a, b, d, ks, kt: (a, b, d.to(BF), ks, kt), TypeError, r"^d must be torch.float32"),
    (lambda a, b, d, ks, kt: (a.float(), b, d, ks, kt), TypeError, r"^a must be torch.bfloat16"),
    (lambda a, b, d, ks, kt: (a, b, d, [128, 0, 100], kt), ValueError,
     r"ks\[2\] = 100 is not a multiple of 64"),
    (lambda a, b, d, ks, kt: (a, b, d, [128, 0, -64], kt), ValueError, r"ks\[2\] = -64 is "
                                                                       r"negative"),
    (lambda a, b, d, ks, kt: (a, b, d, ks[:2], kt), ValueError,
     r"len\(ks\) = 2 does not match num_groups G = d.shape\[0\] = 3"),
    (lambda a, b, d, ks, kt: (a[:128], b, d, ks, kt), ValueError,
     r"^a must have shape \[192, 128\] \(\[sum\(ks\), M\]\)"),
    (lambda a, b, d, ks, kt: (a, b[:, :32], d, ks, kt), ValueError,
     r"^b must have shape \[192, 64\]"),
    (lambda a, b, d, ks, kt: (a, b, d, ks, kt[:2]), ValueError,
     r"^ks_tensor must have shape \[3\]"),
    (lambda a, b, d, ks, kt: (a[:, :100], b, d[:, :100], ks, kt), ValueError,
     r"^M must be a multiple of 8"),
    (lambda a, b, d, ks, kt: (a.t().contiguous().t(), b, d, ks, kt), ValueError,
     r"^a must be contiguous"),
])
def test_k_grouped_rules_name_the_argument(change, exc, pattern):
    a, b, d, ks, kt = change(*k_grouped_args())
    with pytest.raises(exc, match=pattern):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt)


def test_k_grouped_spellings_and_flags():
    a, b, d, ks, kt = k_grouped_args()
    with pytest.raises(TypeError, match=r"pass ks or its DeepGEMM spelling ks_cpu, not both"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt, ks_cpu=ks)
    with pytest.raises(TypeError, match=r"pass ks_tensor or its DeepGEMM spelling "
                                        r"grouped_layout, not both"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt, grouped_layout=kt)
    with pytest.raises(TypeError, match=r"ks \(DeepGEMM: ks_cpu\) is required"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_tensor=kt)
    with pytest.raises(TypeError, match=r"ks_tensor \(DeepGEMM: grouped_layout\) is required"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks)
    with pytest.raises(ValueError, match=r"use_psum_layout=True is not supported"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt, use_psum_layout=True)
    with pytest.raises(ValueError, match=r"^epilogue must be None"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt, epilogue=1)
    with pytest.raises(TypeError, match=r"^c must be torch.float32 like d"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt, c=d.to(BF))
    with pytest.raises(ValueError, match=r"^c must have d's shape"):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt, c=d[:2])


@pytest.mark.parametrize("c", ["none", "d", "separate"])
def test_k_grouped_traces_with_deepgemm_spellings(c, compile_recording):
    def fn(a, b, d, ks, kt, c):
        dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks_cpu=ks, grouped_layout=kt, c=c)
        return d * 2

    with FakeTensorMode():
        a, b, d, ks, kt = k_grouped_args(device="cuda")
        cv = {"none": None, "d": d, "separate": torch.empty_like(d)}[c]
        out, graphs = compile_recording(fn, "aot_eager", a, b, d, ks, kt, cv)
        assert out.shape == d.shape
    assert len(graphs) == 1 and "dgemm.k_grouped_bf16_gemm_tn_contiguous" in graphs[0]


def test_k_grouped_meta_and_schema():
    a, b, d, ks, kt = k_grouped_args(device="meta")
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'meta'"):
        torch.ops.dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, kt, True)
    with pytest.raises(ValueError, match=r"len\(ks\) = 2 does not match"):
        torch.ops.dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks[:2], kt, True)
    schema = str(torch.ops.dgemm.k_grouped_bf16_gemm_tn_contiguous.default._schema)
    assert "Tensor(a2!) d" in schema and schema.count("!") == 1
    assert "SymInt[] ks" in schema or "int[] ks" in schema


def test_exported_names():
    for name in ("bf16_gemm_nt", "bf16_gemm_nn", "bf16_gemm_tn", "bf16_gemm_tt",
                 "m_grouped_bf16_gemm_nt_contiguous", "m_grouped_bf16_gemm_nn_contiguous",
                 "m_grouped_bf16_gemm_nt_masked", "k_grouped_bf16_gemm_tn_contiguous",
                 "bf16_gemm_reference", "m_grouped_bf16_reference",
                 "m_grouped_bf16_masked_reference", "k_grouped_bf16_reference"):
        assert name in dgemm.__all__ and callable(getattr(dgemm, name))


# --- the binding against the real runtime (no GPU: its checks come before the driver) --------

def test_launchers_reach_the_real_runtimes_checks():
    import os

    from dgemm import _runtime

    path = os.environ.get("DGEMM_RUNTIME_LIB", "")
    if not os.path.isfile(path):
        pytest.skip("DGEMM_RUNTIME_LIB names no built runtime library")
    if not hasattr(__import__("ctypes").CDLL(path), "dgemm_bf16_gemm"):
        pytest.skip(f"{path} has no BF16 entries (an older library, or a stub)")
    gib = 1 << 30
    with pytest.raises(ValueError, match=r"InvalidArgument: argument 'lda' must be >= k = 256"):
        _runtime.bf16_launch(gib, 128, 0, 3 * gib, 256, 0, 5 * gib, False, False, 64, 64, 256, 0)
    with pytest.raises(ValueError, match=r"argument 'grouped_layout' must not be null"):
        _runtime.m_grouped_bf16_launch(gib, 3 * gib, 0, 5 * gib, 0, 256, 64, 256, 2, None, 0)
    with pytest.raises(ValueError, match=r"argument 'expected_m' must be 0 \(none\)"):
        _runtime.m_grouped_bf16_launch(gib, 3 * gib, 0, 5 * gib, 7 * gib, 256, 64, 256, 2, -1,
                                       0)
    with pytest.raises(ValueError, match=r"argument 'masked_m' must not be null"):
        _runtime.masked_bf16_launch(gib, 3 * gib, 5 * gib, 0, 64, 64, 256, 2, 32, 0)
    with pytest.raises(ValueError, match=r"argument 'ks_host\[1\]' must be a multiple of 64"):
        _runtime.k_grouped_bf16_launch(gib, 3 * gib, 5 * gib, True, 64, 64, [64, 32],
                                       7 * gib, 0)
