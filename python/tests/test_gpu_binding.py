"""What the torch entry point hands the runtime, checked against the stub runtime
(tests/stub_runtime.c, which records its arguments and computes nothing): the
pointers, sizes, stream and workspace, c=None zeroing d, and an all-empty
problem never reaching the runtime. Needs a GPU for CUDA tensors, not the real
runtime."""

import pytest

torch = pytest.importorskip("torch")

import dgemm  # noqa: E402

pytestmark = pytest.mark.gpu

KS = [128, 0, 256]
M, N = 8, 12


def _args(ks=KS):
    total_k = sum(ks)
    kb = total_k // 128
    a = (torch.zeros(M * total_k, dtype=torch.float8_e4m3fn, device="cuda"),
         torch.ones(kb, M, device="cuda").T)
    b = (torch.zeros(N * total_k, dtype=torch.float8_e4m3fn, device="cuda"),
         torch.ones(kb, N, device="cuda").T)
    d = torch.full((len(ks), M, N), 5.0, device="cuda")
    c = torch.full_like(d, 7.0)
    ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
    return a, b, d, c, ks_tensor


def _expected_workspace(ks):
    return 128 * (M + N + len(ks)) + sum(ks)  # the stub's formula


def test_arguments_reach_the_runtime(stub):
    a, b, d, c, ks_tensor = _args()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor, c)
    call = stub.last_call()
    assert call.calls >= 1
    assert list(call.ptrs) == [a[0].data_ptr(), a[1].data_ptr(), b[0].data_ptr(),
                               b[1].data_ptr(), d.data_ptr(), c.data_ptr()]
    assert (call.m, call.n, call.num_groups, list(call.ks[:3])) == (M, N, 3, KS)
    assert call.ks_device == ks_tensor.data_ptr()
    assert call.stream == stream.cuda_stream
    assert call.workspace_bytes == _expected_workspace(KS)
    assert call.workspace is not None and call.workspace % 128 == 0
    torch.cuda.synchronize()
    assert bool((d == 5.0).all())  # the stub wrote nothing, and nothing else did


def test_default_stream_is_the_current_stream(stub):
    a, b, d, c, ks_tensor = _args()
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor, c)
    assert (stub.last_call().stream or 0) == torch.cuda.current_stream().cuda_stream


def test_c_none_zeroes_d_and_passes_d_as_c(stub):
    a, b, d, _, ks_tensor = _args()
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor)
    call = stub.last_call()
    assert call.ptrs[5] == d.data_ptr() == call.ptrs[4]
    torch.cuda.synchronize()
    assert bool((d == 0).all())


def test_c_aliasing_d_is_passed_as_is(stub):
    a, b, d, _, ks_tensor = _args()
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor, d)
    assert stub.last_call().ptrs[5] == d.data_ptr()
    torch.cuda.synchronize()
    assert bool((d == 5.0).all())


def test_all_groups_empty_copies_c_without_the_runtime(stub):
    a, b, d, c, ks_tensor = _args(ks=[0, 0])
    calls = stub.last_call().calls
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, [0, 0], ks_tensor, c)
    assert stub.last_call().calls == calls
    torch.cuda.synchronize()
    assert torch.equal(d, c)
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, [0, 0], ks_tensor)
    torch.cuda.synchronize()
    assert bool((d == 0).all())


def test_check_ks_tensor_compares_values(stub):
    a, b, d, c, ks_tensor = _args()
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor, c, check_ks_tensor=True)
    wrong = torch.tensor([256, 0, 128], dtype=torch.int32, device="cuda")
    with pytest.raises(ValueError, match=r"ks_tensor holds \[256, 0, 128\] but ks is \[128, 0, 256\]"):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, wrong, c, check_ks_tensor=True)


def test_runtime_failure_is_raised(stub):
    a, b, d, c, ks_tensor = _args()
    stub.set_fail(5)
    with pytest.raises(RuntimeError, match=r"dgemm runtime: CudaError: stub failure 5"):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor, c)


def test_offset_view_breaks_alignment(stub):
    a, b, d, c, ks_tensor = _args()
    storage = torch.zeros(a[0].numel() + 8, dtype=torch.float8_e4m3fn, device="cuda")
    with pytest.raises(ValueError, match=r"a's data pointer 0x[0-9a-f]+ is not 16-byte aligned"):
        dgemm.k_grouped_fp8_gemm_nt_contiguous((storage[8:], a[1]), b, d, KS, ks_tensor, c)


def test_graph_capture_records_the_capture_stream(stub):
    # The stub launches nothing, so this checks only the Python side under
    # capture: no synchronization, and the capture stream handed over.
    a, b, d, _, ks_tensor = _args()
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor)  # warm-up
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, KS, ks_tensor)
        capture_stream = torch.cuda.current_stream().cuda_stream
    assert stub.last_call().stream == capture_stream
    d.fill_(3.0)
    graph.replay()
    torch.cuda.synchronize()
    assert bool((d == 0).all())  # the captured zeroing of d


@pytest.mark.parametrize("accumulate", [False, True])
def test_opcheck_of_the_custom_op(stub, accumulate):
    # torch's checks of a custom op (schema, fake vs real, functionalization, ...), with the
    # stub runtime behind the real implementation.
    # test_schema is left out: torch's SchemaCheckMode compares the inputs before and after
    # with arithmetic that has no float8 kernel ("mul_cuda" not implemented for
    # 'Float8_e4m3fn', torch 2.11); what it checks, that the op writes d and nothing else,
    # is checked below on the bytes of every input.
    a, b, d, c, ks_tensor = _args()
    args = (a[0], a[1], b[0], b[1], d, KS, ks_tensor, None if accumulate else c, accumulate)
    torch.library.opcheck(torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous.default, args,
                          test_utils=("test_autograd_registration", "test_faketensor",
                                      "test_aot_dispatch_dynamic"))
    inputs = [t for t in args if isinstance(t, torch.Tensor) and t is not d]
    before = [t.view(torch.uint8).clone() if t.is_contiguous() else t.clone() for t in inputs]
    torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous(*args)
    torch.cuda.synchronize()
    for t, old in zip(inputs, before):
        now = t.view(torch.uint8) if t.is_contiguous() else t
        assert torch.equal(now, old)
    schema = torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous.default._schema
    assert [arg.name for arg in schema.arguments if arg.is_write] == ["d"]
