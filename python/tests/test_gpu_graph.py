"""CUDA graph capture: the call, its workspace allocation and (for c=None) the
zeroing of d are captured once; replays with new data copied into the same
buffers equal eager calls bit for bit."""

import pytest

torch = pytest.importorskip("torch")

import dgemm  # noqa: E402
from dgemm.testing import calc_diff, same_bits  # noqa: E402

pytestmark = pytest.mark.gpu

KS = [256, 0, 128, 384]
M, N = 256, 384


class Buffers:
    """Fixed device buffers that every call (eager or replayed) reads and writes."""

    def __init__(self):
        total_k = sum(KS)
        kb = total_k // 128
        self.a = (torch.empty(M * total_k, dtype=torch.float8_e4m3fn, device="cuda"),
                  torch.empty(kb, M, device="cuda").T)
        self.b = (torch.empty(N * total_k, dtype=torch.float8_e4m3fn, device="cuda"),
                  torch.empty(kb, N, device="cuda").T)
        self.c = torch.empty(len(KS), M, N, device="cuda")
        self.d = torch.empty(len(KS), M, N, device="cuda")
        self.ks_tensor = torch.tensor(KS, dtype=torch.int32, device="cuda")

    def load(self, seed):
        """Copies new operands in; returns the float64 reference for them."""
        g = torch.Generator(device="cuda").manual_seed(seed)
        x_a = torch.randn(sum(KS), M, device="cuda", dtype=torch.bfloat16, generator=g)
        x_b = torch.randn(sum(KS), N, device="cuda", dtype=torch.bfloat16, generator=g)
        a = dgemm.make_k_grouped_operand(x_a, KS)
        b = dgemm.make_k_grouped_operand(x_b, KS)
        for dst, src in zip(self.a + self.b, a + b):
            dst.copy_(src)
        self.c.copy_(torch.randn(self.c.shape, device="cuda", generator=g) * 32)
        return a, b

    def call(self, use_c):
        dgemm.k_grouped_fp8_gemm_nt_contiguous(
            self.a, self.b, self.d, KS, self.ks_tensor, self.c if use_c else None)


@pytest.mark.parametrize("use_c", [True, False], ids=["c-separate", "c-none"])
def test_graph_replay_equals_eager(use_c, real_runtime):
    buf = Buffers()
    buf.load(seed=1)
    # Warm up off the capture (first-call work such as module loading), as
    # torch's graph documentation recommends.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        buf.call(use_c)
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        buf.call(use_c)

    for seed in (2, 3):
        a, b = buf.load(seed)
        buf.d.fill_(float("nan"))
        graph.replay()
        replayed = buf.d.clone()
        buf.d.fill_(float("nan"))
        buf.call(use_c)
        eager = buf.d.clone()
        torch.cuda.synchronize()
        assert same_bits(replayed, eager), f"seed {seed}: replay differs from the eager call"
        expected = dgemm.k_grouped_reference(a, b, KS, M, N, buf.c if use_c else None)
        diff = calc_diff(eager, expected)
        assert diff < 1e-3, f"seed {seed}: calc_diff vs reference {diff:.3e}"
