"""Comparison helpers shared by the tests and by users checking results."""

from __future__ import annotations

import torch


def calc_diff(x: torch.Tensor, y: torch.Tensor) -> float:
    """DeepGEMM's similarity metric ``1 - 2 sum(x*y) / sum(x*x + y*y)``, in float64.

    0 for identical tensors; DeepGEMM's tests accept FP8 GEMM results below 1e-3.
    """
    x, y = x.double(), y.double()
    denominator = (x * x + y * y).sum()
    if denominator == 0:
        return 0.0
    return float(1 - 2 * (x * y).sum() / denominator)


def same_bits(x: torch.Tensor, y: torch.Tensor) -> bool:
    """Whether two float32 tensors are bitwise identical (NaNs and signed zeros included)."""
    return x.shape == y.shape and torch.equal(x.view(torch.int32), y.view(torch.int32))


# References of the BF16 GEMMs: FP32 products of the BF16 operands (exact inputs, FP32
# accumulation in torch's order; keep TF32 off, torch.backends.cuda.matmul.allow_tf32 =
# False, for an FP32 reference on a GPU).

def bf16_gemm_reference(a: torch.Tensor, b: torch.Tensor,
                        c: torch.Tensor | None = None) -> torch.Tensor:
    """``a . b^T (+ c)`` in FP32: a ``[M, K]``, b ``[N, K]`` (any strides)."""
    out = a.float() @ b.float().t()
    return out if c is None else out + c.float()


def m_grouped_bf16_reference(a: torch.Tensor, b: torch.Tensor,
                             grouped_layout: torch.Tensor) -> torch.Tensor:
    """FP32 ``[M_sum, N]``: row r is ``a[r] . b[e]^T`` for its expert ``e =
    grouped_layout[r]`` (b ``[G, N, K]``), 0 for padding (-1)."""
    out = torch.zeros((a.shape[0], b.shape[1]), dtype=torch.float32, device=a.device)
    layout = grouped_layout.long()
    for e in range(b.shape[0]):
        rows = (layout == e).nonzero().squeeze(1)
        if rows.numel():
            out[rows] = a[rows].float() @ b[e].float().t()
    return out


def m_grouped_bf16_masked_reference(a: torch.Tensor, b: torch.Tensor,
                                    masked_m) -> torch.Tensor:
    """FP32 ``[G, M_max, N]``: ``a[g] . b[g]^T`` on the rows below ``clamp(masked_m[g], 0,
    M_max)``, 0 elsewhere (masked_m a tensor or a list)."""
    g, m_max, _ = a.shape
    counts = masked_m.tolist() if isinstance(masked_m, torch.Tensor) else list(masked_m)
    out = torch.zeros((g, m_max, b.shape[1]), dtype=torch.float32, device=a.device)
    for e in range(g):
        rows = min(max(int(counts[e]), 0), m_max)
        out[e, :rows] = a[e, :rows].float() @ b[e].float().t()
    return out


def k_grouped_bf16_reference(a: torch.Tensor, b: torch.Tensor, ks,
                             c: torch.Tensor | None = None) -> torch.Tensor:
    """FP32 ``[G, M, N]``: ``a_g^T . b_g (+ c[g])`` over group g's ``ks[g]`` rows of a
    ``[sum(ks), M]`` and b ``[sum(ks), N]``."""
    out = torch.zeros((len(ks), a.shape[1], b.shape[1]), dtype=torch.float32, device=a.device)
    start = 0
    for g, k in enumerate(ks):
        if k:
            out[g] = a[start:start + k].float().t() @ b[start:start + k].float()
        start += k
    return out if c is None else out + c.float()
