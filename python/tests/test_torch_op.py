"""The GEMM as a torch custom op, without a GPU: its schema, and tracing under
FakeTensorMode (fake CUDA tensors need no device) by torch.compile(fullgraph=True) with the
"eager" and "aot_eager" backends, where the fake implementation applies every rule but the
pointer ones. opcheck, which runs the real implementation, is in test_gpu_binding.py."""

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op needs torch >= 2.4", allow_module_level=True)

from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402

import dgemm  # noqa: E402

F8 = torch.float8_e4m3fn
OP = "dgemm::k_grouped_fp8_gemm_nt_contiguous"


def make(m=64, n=128, ks=(128, 0, 256), device="cuda"):
    total_k = sum(ks)
    kb = total_k // 128
    a = (torch.empty(m * total_k, dtype=F8, device=device), torch.empty(kb, m, device=device).T)
    b = (torch.empty(n * total_k, dtype=F8, device=device), torch.empty(kb, n, device=device).T)
    d = torch.empty(len(ks), m, n, device=device)
    ks_tensor = torch.empty(len(ks), dtype=torch.int32, device=device)
    return a, b, d, list(ks), ks_tensor


def gemm_then_scale(a, b, d, ks, ks_tensor):
    dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, c=d)
    return d * 2


def test_schema_mutates_d_and_takes_host_ks():
    dgemm.k_grouped_fp8_gemm_nt_contiguous  # imports the module that defines the op
    schema = str(torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous.default._schema)
    assert "Tensor(a4!) d" in schema
    assert "SymInt[] ks" in schema or "int[] ks" in schema
    assert "Tensor? c" in schema
    assert schema.endswith("-> ()")


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compiles_with_fullgraph_on_fake_cuda_tensors(backend):
    graphs = []

    def recording(gm, example_inputs):
        graphs.append(str(gm.graph))
        return torch._dynamo.lookup_backend(backend)(gm, example_inputs)

    torch._dynamo.reset()
    with FakeTensorMode():
        a, b, d, ks, ks_tensor = make()
        out = torch.compile(gemm_then_scale, fullgraph=True, backend=recording)(
            a, b, d, ks, ks_tensor)
        assert out.shape == d.shape and out.device.type == "cuda"
    assert len(graphs) == 1
    assert "dgemm.k_grouped_fp8_gemm_nt_contiguous" in graphs[0]


@pytest.mark.parametrize("c", ["d", "none", "separate"])
def test_fake_call_runs_the_rules_but_the_pointer_ones(c):
    with FakeTensorMode():
        a, b, d, ks, ks_tensor = make()
        cv = {"d": d, "none": None, "separate": torch.empty_like(d)}[c]
        assert dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, cv) is None


def test_traced_call_reports_the_rule_at_compile_time():
    torch._dynamo.reset()
    with FakeTensorMode():
        a, b, d, ks, ks_tensor = make()
        bad_ks_tensor = torch.empty(len(ks) + 1, dtype=torch.int32, device="cuda")
        with pytest.raises(Exception, match=r"ks_tensor must have shape \[G\] = \[3\]"):
            torch.compile(gemm_then_scale, fullgraph=True, backend="aot_eager")(
                a, b, d, ks, bad_ks_tensor)


def test_meta_tensors_reach_the_fake_implementation():
    a, b, d, ks, ks_tensor = make(device="meta")
    with pytest.raises(ValueError, match=r"^a must be a CUDA tensor, got device 'meta'"):
        torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous(
            a[0], a[1], b[0], b[1], d, ks, ks_tensor, None, True)
    # A wrong shape is reported before the device.
    with pytest.raises(ValueError, match=r"len\(ks\) = 2 does not match"):
        torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous(
            a[0], a[1], b[0], b[1], d, ks[:2], ks_tensor, None, True)


def test_host_ks_is_specialized_in_a_compiled_graph():
    # ks is a constant of the traced graph (its values set the kernel's configuration and
    # tensor maps): a call with other ks compiles another graph.
    import torch._dynamo.testing

    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounter()
    with FakeTensorMode():
        compiled = torch.compile(gemm_then_scale, fullgraph=True, backend=counter)
        compiled(*make(ks=(128, 0, 256)))
        compiled(*make(ks=(128, 0, 256)))
        assert counter.frame_count == 1
        compiled(*make(ks=(256, 128, 0)))
        assert counter.frame_count == 2
