"""What the BF16 entry points hand the runtime, checked against the stub runtime
(tests/stub_runtime.c, which records its arguments and computes nothing): pointers, strides
and majorness, sizes and stream, c copied into d before an accumulating call, empty problems
never reaching the runtime; and torch's opcheck of the four custom ops. Needs a GPU for CUDA
tensors, not the real runtime."""

import pytest

torch = pytest.importorskip("torch")

import dgemm  # noqa: E402

pytestmark = pytest.mark.gpu

BF = torch.bfloat16
M, N, K = 24, 16, 64


def _normal(d_dtype=torch.float32):
    a = torch.zeros(M, K, dtype=BF, device="cuda")
    b = torch.zeros(N, K, dtype=BF, device="cuda")
    d = torch.full((M, N), 5.0, dtype=d_dtype, device="cuda")
    return a, b, d


@pytest.mark.parametrize("layout,major_a,major_b", [
    ("nt", 0, 0), ("nn", 0, 1), ("tn", 1, 1), ("tt", 1, 0)])
def test_normal_arguments_reach_the_runtime(stub, layout, major_a, major_b):
    a, b, d = _normal()
    a_arg = a if layout[0] == "n" else a.t().contiguous()
    b_arg = b if layout[1] == "t" else b.t().contiguous()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        getattr(dgemm, f"bf16_gemm_{layout}")(a_arg, b_arg, d, c=d)
    call = stub.last_bf16_call()
    assert call.entry == 0 and call.calls >= 1
    assert list(call.ptrs[:3]) == [a_arg.data_ptr(), b_arg.data_ptr(), d.data_ptr()]
    assert (call.major_a, call.major_b) == (major_a, major_b)
    assert call.lda == (K if major_a == 0 else M) and call.ldb == (K if major_b == 0 else N)
    assert (call.m, call.n, call.k, call.d_f32, call.accumulate) == (M, N, K, 1, 1)
    assert call.stream == stream.cuda_stream


def test_normal_padded_view_passes_its_stride(stub):
    a = torch.zeros(M, K + 24, dtype=BF, device="cuda")[:, :K]
    b, d = _normal(BF)[1:]
    dgemm.bf16_gemm_nt(a, b, d)
    call = stub.last_bf16_call()
    assert (call.lda, call.major_a, call.d_f32, call.accumulate) == (K + 24, 0, 0, 0)


def test_normal_separate_c_is_copied_into_d_first(stub):
    a, b, d = _normal()
    c = torch.full_like(d, 7.0)
    dgemm.bf16_gemm_nt(a, b, d, c=c)
    assert stub.last_bf16_call().accumulate == 1
    torch.cuda.synchronize()
    assert bool((d == 7.0).all())  # the stub wrote nothing: d holds c


def test_normal_empty_k_sets_d_without_the_runtime(stub):
    a = torch.zeros(M, 0, dtype=BF, device="cuda")
    b = torch.zeros(N, 0, dtype=BF, device="cuda")
    d = torch.full((M, N), 5.0, device="cuda")
    calls = stub.last_bf16_call().calls
    dgemm.bf16_gemm_nt(a, b, d, c=torch.full_like(d, 3.0))
    torch.cuda.synchronize()
    assert bool((d == 3.0).all())
    dgemm.bf16_gemm_nt(a, b, d, c=d)
    torch.cuda.synchronize()
    assert bool((d == 3.0).all())
    dgemm.bf16_gemm_nt(a, b, d)
    torch.cuda.synchronize()
    assert bool((d == 0).all())
    assert stub.last_bf16_call().calls == calls


def test_normal_offset_view_breaks_alignment(stub):
    a, b, d = _normal()
    storage = torch.zeros(M * K + 4, dtype=BF, device="cuda")
    with pytest.raises(ValueError, match=r"a's data pointer 0x[0-9a-f]+ is not 16-byte aligned"):
        dgemm.bf16_gemm_nt(storage[4:].view(M, K), b, d)


def test_normal_d_overlapping_an_input_is_refused(stub):
    buf = torch.zeros(M * N * 2 + M * K, dtype=BF, device="cuda")
    d = buf[:M * N * 2].view(torch.float32).view(M, N)
    a = buf[M * N * 2 - 8:M * N * 2 - 8 + M * K].view(M, K)
    with pytest.raises(ValueError, match=r"d must not overlap a"):
        dgemm.bf16_gemm_nt(a, _normal()[1], d)


def test_runtime_failure_is_raised(stub):
    a, b, d = _normal()
    stub.set_fail(3)
    with pytest.raises(RuntimeError, match=r"dgemm runtime: KernelNotFound: stub failure 3"):
        dgemm.bf16_gemm_nt(a, b, d)
    stub.set_fail(1)
    with pytest.raises(ValueError, match=r"dgemm runtime: InvalidArgument: stub failure 1"):
        dgemm.bf16_gemm_nt(a, b, d)


def _grouped(g=3, m=256, psum=False):
    a = torch.zeros(m, K, dtype=BF, device="cuda")
    b = torch.zeros(g, N, K, dtype=BF, device="cuda")
    d = torch.zeros(m, N, dtype=BF, device="cuda")
    layout = torch.zeros(g if psum else m, dtype=torch.int32, device="cuda")
    return a, b, d, layout


@pytest.mark.parametrize("form", ["nt", "nn"])
@pytest.mark.parametrize("psum", [False, True])
def test_contiguous_arguments_reach_the_runtime(stub, form, psum):
    a, b, d, layout = _grouped(psum=psum)
    kw = dict(use_psum_layout=psum, check_grouped_layout=False)
    if form == "nn":
        b = b.transpose(1, 2).contiguous()
        dgemm.m_grouped_bf16_gemm_nn_contiguous(a, b, d, layout, **kw)
    else:
        if psum:
            kw["expected_m_for_psum_layout"] = 96
        dgemm.m_grouped_bf16_gemm_nt_contiguous(a, b, d, layout, **kw)
    call = stub.last_bf16_call()
    assert call.entry == (2 if psum else 1)
    assert list(call.ptrs) == [a.data_ptr(), b.data_ptr(), d.data_ptr(), layout.data_ptr()]
    assert (call.m, call.n, call.k, call.num_groups) == (256, N, K, 3)
    assert call.major_b == (1 if form == "nn" else 0)
    assert call.expected_m == ((96 if form == "nt" else 0) if psum else -1)


def test_masked_arguments_reach_the_runtime(stub):
    a = torch.zeros(3, 32, K, dtype=BF, device="cuda")
    b = torch.zeros(3, N, K, dtype=BF, device="cuda")
    d = torch.zeros(3, 32, N, dtype=BF, device="cuda")
    masked_m = torch.zeros(3, dtype=torch.int32, device="cuda")
    dgemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, 20)
    call = stub.last_bf16_call()
    assert call.entry == 3
    assert list(call.ptrs) == [a.data_ptr(), b.data_ptr(), d.data_ptr(), masked_m.data_ptr()]
    assert (call.m, call.n, call.k, call.num_groups, call.expected_m) == (32, N, K, 3, 20)


KS = [64, 0, 128]


def _k_grouped(ks=KS):
    a = torch.zeros(sum(ks), M, dtype=BF, device="cuda")
    b = torch.zeros(sum(ks), N, dtype=BF, device="cuda")
    d = torch.full((len(ks), M, N), 5.0, device="cuda")
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
    return a, b, d, ks_tensor


@pytest.mark.parametrize("c", ["none", "d", "separate"])
def test_k_grouped_arguments_reach_the_runtime(stub, c):
    a, b, d, ks_tensor = _k_grouped()
    cv = {"none": None, "d": d, "separate": torch.full_like(d, 7.0)}[c]
    dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, KS, ks_tensor, cv)
    call = stub.last_bf16_call()
    assert call.entry == 4
    assert list(call.ptrs) == [a.data_ptr(), b.data_ptr(), d.data_ptr(), ks_tensor.data_ptr()]
    assert (call.m, call.n, call.num_groups, list(call.ks[:3])) == (M, N, 3, KS)
    assert call.accumulate == (c != "none")
    torch.cuda.synchronize()
    assert bool((d == {"none": 5.0, "d": 5.0, "separate": 7.0}[c]).all())


def test_k_grouped_all_groups_empty_without_the_runtime(stub):
    a, b, d, ks_tensor = _k_grouped(ks=[0, 0])
    calls = stub.last_bf16_call().calls
    c = torch.full_like(d, 2.0)
    dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [0, 0], ks_tensor, c)
    torch.cuda.synchronize()
    assert torch.equal(d, c)
    dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, [0, 0], ks_tensor)
    torch.cuda.synchronize()
    assert bool((d == 0).all())
    assert stub.last_bf16_call().calls == calls


def _opcheck(op, args):
    # As test_gpu_binding.py: the op's registration, fake implementation and AOT dispatch;
    # then that the op writes d and nothing else.
    torch.library.opcheck(op, args, test_utils=("test_autograd_registration",
                                                "test_faketensor",
                                                "test_aot_dispatch_dynamic"))
    inputs = [t for t in args if isinstance(t, torch.Tensor)][:2]
    before = [t.clone() for t in inputs]
    op(*args)
    torch.cuda.synchronize()
    for t, old in zip(inputs, before):
        assert torch.equal(t, old)
    schema = op._schema
    assert [arg.name for arg in schema.arguments if arg.is_write] == ["d"]


@pytest.mark.parametrize("accumulate", [False, True])
def test_opcheck_of_the_normal_op(stub, accumulate):
    a, b, d = _normal()
    _opcheck(torch.ops.dgemm.bf16_gemm.default, (a, b.t().contiguous().t(), d, accumulate))


def test_opcheck_of_the_grouped_ops(stub):
    a, b, d, layout = _grouped()
    _opcheck(torch.ops.dgemm.m_grouped_bf16_gemm_contiguous.default,
             (a, b, d, layout, False, 0))
    x = torch.zeros(3, 32, K, dtype=BF, device="cuda")
    _opcheck(torch.ops.dgemm.m_grouped_bf16_gemm_nt_masked.default,
             (x, b, torch.zeros(3, 32, N, dtype=BF, device="cuda"),
              torch.zeros(3, dtype=torch.int32, device="cuda"), 16))
    ka, kb, kd, ks_tensor = _k_grouped()
    _opcheck(torch.ops.dgemm.k_grouped_bf16_gemm_tn_contiguous.default,
             (ka, kb, kd, KS, ks_tensor, True))
