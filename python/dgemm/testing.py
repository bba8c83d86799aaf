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
