"""The m-grouped masked FP8 GEMM (the MoE decode step).

Drop-in for DeepGEMM's SM90 ``m_grouped_fp8_gemm_nt_masked`` with the 1D2D recipe:
G groups of M_max rows of storage, of which the first ``masked_m[g]`` are computed.
``masked_m`` lives on the device and is read by the kernel only, so a call captured into
a CUDA graph computes the counts of each replay. Layouts: docs/KernelABI.md ("The 1D2D
kernels").
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import torch

from . import _fp8_1d2d as rules
from . import _runtime
from .m_grouped import get_mn_major_tma_aligned_tensor, m_grouped_reference

_MAX_ROWS = 2**31 - 1


def _check_masked(x, sfa, w, sfb, d, masked_m, expected_m, addresses):
    """Every rule of the masked GEMM on the op's arguments; returns (G, M_max, N, K)."""
    x = rules.tensor("a[0]", x, torch.float8_e4m3fn, 3)
    sfa = rules.tensor("sfa", sfa, torch.float32, 3)
    w = rules.tensor("b[0]", w, torch.float8_e4m3fn, 3)
    sfb = rules.tensor("sfb", sfb, torch.float32, 3)
    d = rules.tensor("d", d, torch.bfloat16, 3)
    masked_m = rules.tensor("masked_m", masked_m, torch.int32, 1)
    rules.int_at_least("expected_m", expected_m, 1)
    g, m_max, k = x.shape
    if g < 1:
        raise ValueError(f"num_groups G = a[0].shape[0] must be >= 1, got {g}")
    if tuple(w.shape[::2]) != (g, k):
        raise ValueError(f"b[0] must be [G, N, K] with G = {g} and K = {k} (a[0]'s), got "
                         f"{list(w.shape)}")
    n = w.shape[1]
    rules.check_extents("M_max", m_max, n, k)
    if g * m_max > _MAX_ROWS:
        raise ValueError(f"G * M_max = {g * m_max} must be <= 2^31 - 1 (the rows of a and d)")
    kb = k // rules.BLOCK_K
    rules.check_shapes((("d", d, (g, m_max, n), ""), ("sfa", sfa, (g, m_max, kb), ""),
                        ("sfb", sfb, (g, (n + 127) // 128, kb), ""),
                        ("masked_m", masked_m, (g,), "")))
    rules.check_contiguous((("a[0]", x), ("b[0]", w), ("sfb", sfb), ("d", d),
                            ("masked_m", masked_m)))
    rules.check_sfa_layout(sfa)
    named = (("a[0]", x), ("sfa", sfa), ("b[0]", w), ("sfb", sfb), ("d", d),
             ("masked_m", masked_m))
    rules.check_devices(named, d)
    if addresses:
        rules.check_alignment((("a[0]", x, 16), ("sfa", sfa, 16), ("b[0]", w, 16),
                               ("sfb", sfb, 4), ("d", d, 16), ("masked_m", masked_m, 4)))
    return g, m_max, n, k


# The GEMM as a torch custom op (torch.ops.dgemm.m_grouped_fp8_gemm_nt_masked): it writes d
# and returns nothing, so torch.compile, FakeTensor and meta tensors see it as such.
@torch.library.custom_op("dgemm::m_grouped_fp8_gemm_nt_masked", mutates_args=("d",))
def _masked_op(x: torch.Tensor, sfa: torch.Tensor, w: torch.Tensor, sfb: torch.Tensor,
               d: torch.Tensor, masked_m: torch.Tensor, expected_m: int) -> None:
    g, m_max, n, k = _check_masked(x, sfa, w, sfb, d, masked_m, expected_m, addresses=True)
    if m_max == 0:
        return
    _runtime.load()
    with torch.cuda.device(d.device):
        stream = torch.cuda.current_stream(d.device)
        _runtime.masked_launch(
            x.data_ptr(), sfa.data_ptr(), w.data_ptr(), sfb.data_ptr(), d.data_ptr(),
            masked_m.data_ptr(), m_max, n, k, g, expected_m, stream.cuda_stream)


@_masked_op.register_fake
def _masked_fake(x, sfa, w, sfb, d, masked_m, expected_m) -> None:
    # Every rule but the pointer ones, so a traced call fails as an eager one would.
    _check_masked(x, sfa, w, sfb, d, masked_m, expected_m, addresses=False)
    return None


def m_grouped_fp8_gemm_nt_masked(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    d: torch.Tensor,
    masked_m: torch.Tensor,
    expected_m: int,
    recipe: Optional[Tuple[int, int, int]] = None,
    compiled_dims: str = "nk",
    disable_ue8m0_cast: bool = False,
) -> None:
    """``d[g, r] = (x[g, r] * sfa[g, r]) . (w[g] * sfb[g])^T`` for every row ``r < masked_m[g]``.

    - ``a = (x, sfa)``: x float8_e4m3fn ``[G, M_max, K]`` contiguous (K a multiple of 128);
      sfa float32 ``[G, M_max, K / 128]``, per token and 128-wide K block, any strides
      (copied into ``get_mn_major_tma_aligned_tensor``'s layout when not already in it).
    - ``b = (w, sfb)``: w float8_e4m3fn ``[G, N, K]`` contiguous; sfb float32
      ``[G, ceil(N / 128), K / 128]`` contiguous, per 128x128 block.
    - ``d``: bfloat16 ``[G, M_max, N]`` contiguous (N a multiple of 8). Rows
      ``r >= masked_m[g]`` are neither computed nor written.
    - ``masked_m``: int32 ``[G]`` on d's device, read by the kernel only: the host never
      reads it, so the call can be captured into a CUDA graph and masked_m changed between
      replays. A value outside ``[0, M_max]`` is clamped into it (never an out-of-bounds
      access).
    - ``expected_m``: a positive int, the rows per group the kernel choice plans for.
    - ``recipe`` None or ``(1, 128, 128)``; ``compiled_dims`` and ``disable_ue8m0_cast`` are
      accepted and ignored (scales are FP32).

    Runs on the current stream of d's device; returns without synchronizing. Raises
    TypeError/ValueError for bad arguments before launching, RuntimeError if the runtime
    library is missing or the launch fails. A thin wrapper over the custom op
    ``torch.ops.dgemm.m_grouped_fp8_gemm_nt_masked`` (mutates d; its fake implementation
    checks every rule but the pointer ones).
    """
    rules.check_recipe(recipe)
    rules.check_flags(compiled_dims, disable_ue8m0_cast)
    x, sfa = rules.split_pair("a", a)
    w, sfb = rules.split_pair("b", b)
    rules.int_at_least("expected_m", expected_m, 1)
    sfa = get_mn_major_tma_aligned_tensor(rules.tensor("sfa", sfa, torch.float32, 3))
    torch.ops.dgemm.m_grouped_fp8_gemm_nt_masked(x, sfa, w, sfb, d, masked_m, expected_m)


def m_grouped_masked_reference(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    masked_m: Any,
) -> torch.Tensor:
    """FP32 reference of the dequantized operands: ``[G, M_max, N]``, rows past
    ``clamp(masked_m[g], 0, M_max)`` zero (masked_m a tensor or a list of ints)."""
    x, sfa = a
    w, sfb = b
    g, m_max, _ = x.shape
    counts = masked_m.tolist() if isinstance(masked_m, torch.Tensor) else list(masked_m)
    out = torch.zeros((g, m_max, w.shape[1]), dtype=torch.float32, device=x.device)
    for e in range(g):
        rows = min(max(int(counts[e]), 0), m_max)
        # The contiguous reference with one expert whose first `rows` rows are valid.
        layout = torch.full((m_max,), -1, dtype=torch.int32, device=x.device)
        layout[:rows] = 0
        out[e] = m_grouped_reference((x[e], sfa[e]), (w[e:e + 1], sfb[e:e + 1]), layout)
    return out
