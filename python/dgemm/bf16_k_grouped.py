"""The k-grouped BF16 GEMM (the MoE weight gradient).

Drop-in for DeepGEMM's SM90 ``k_grouped_bf16_gemm_tn_contiguous``: groups g of ``ks[g]``
consecutive rows of a ``[sum_k, M]`` and b ``[sum_k, N]`` (BF16, both MN-major), ``d[g] (+)=
a_g^T . b_g`` in FP32. Layouts: docs/KernelABI.md ("The BF16 kernels").
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import torch

from . import _bf16_checks as bf16_rules
from . import _checks
from . import _fp8_1d2d as rules
from . import _runtime
from .gemm import _MISSING, _host_ks, _resolve_alias

# Every K_g is a multiple of the kernel's 64-deep K block, which must not straddle two groups.
K_GROUP_ALIGNMENT = 64


def _check_k_grouped(a, b, d, ks, ks_tensor, addresses):
    """Every rule of the k-grouped GEMM on the op's arguments; returns (G, M, N, ks)."""
    ks = _checks.normalize_ks(ks, multiple=K_GROUP_ALIGNMENT)
    a = bf16_rules.bf16("a", a, 2)
    b = bf16_rules.bf16("b", b, 2)
    d = rules.tensor("d", d, torch.float32, 3)
    ks_tensor = rules.tensor("ks_tensor", ks_tensor, torch.int32, 1)
    g, m, n = d.shape
    if g < 1 or m < 1 or n < 1:
        raise ValueError(f"d must be [G, M, N] with G, M and N positive, got {list(d.shape)}")
    if len(ks) != g:
        raise ValueError(f"len(ks) = {len(ks)} does not match num_groups G = d.shape[0] = {g}")
    sum_k = sum(ks)
    rules.check_shapes((("a", a, (sum_k, m), " ([sum(ks), M])"),
                        ("b", b, (sum_k, n), " ([sum(ks), N])"),
                        ("ks_tensor", ks_tensor, (g,), " (one int32 K_g per group)")))
    for name, value in (("M", m), ("N", n)):
        if value % bf16_rules.STRIDE_MULTIPLE != 0:
            raise ValueError(f"{name} must be a multiple of 8 (the rows of the MN-major a and "
                             f"b must be 16-byte aligned for TMA), got {value}")
    bf16_rules.check_extents((("G", g), ("M", m), ("N", n)))
    rules.check_contiguous((("a", a), ("b", b), ("d", d), ("ks_tensor", ks_tensor)))
    bf16_rules.check_placement((("a", a, 16), ("b", b, 16), ("d", d, 16),
                                ("ks_tensor", ks_tensor, 4)), d, addresses)
    return g, m, n, ks


# The GEMM as a torch custom op (torch.ops.dgemm.k_grouped_bf16_gemm_tn_contiguous): it
# writes d and returns nothing; accumulate: d += product, else d = product.
@torch.library.custom_op("dgemm::k_grouped_bf16_gemm_tn_contiguous", mutates_args=("d",))
def _k_grouped_op(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, ks: List[int],
                  ks_tensor: torch.Tensor, accumulate: bool) -> None:
    g, m, n, ks = _check_k_grouped(a, b, d, ks, ks_tensor, addresses=True)
    with torch.cuda.device(d.device):
        if sum(ks) == 0:
            # Nothing to multiply: d = c (already in d) or zeros, without a launch.
            if not accumulate:
                d.zero_()
            return
        _runtime.load()
        stream = torch.cuda.current_stream(d.device)
        _runtime.k_grouped_bf16_launch(a.data_ptr(), b.data_ptr(), d.data_ptr(), accumulate,
                                       m, n, ks, ks_tensor.data_ptr(), stream.cuda_stream)


@_k_grouped_op.register_fake
def _k_grouped_fake(a, b, d, ks, ks_tensor, accumulate) -> None:
    _check_k_grouped(a, b, d, ks, ks_tensor, addresses=False)
    return None


def k_grouped_bf16_gemm_tn_contiguous(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    ks: Sequence[int] = _MISSING,  # type: ignore[assignment]
    ks_tensor: Optional[torch.Tensor] = _MISSING,  # type: ignore[assignment]
    c: Optional[torch.Tensor] = None,
    compiled_dims: str = "mn",
    use_psum_layout: bool = False,
    epilogue: Any = None,
    *,
    ks_cpu: Sequence[int] = _MISSING,  # type: ignore[assignment]
    grouped_layout: Optional[torch.Tensor] = _MISSING,  # type: ignore[assignment]
) -> None:
    """``d[g] = c[g] + a_g^T . b_g`` for each group g, a_g and b_g its ``ks[g]`` rows.

    - a: bfloat16 ``[sum(ks), M]``, b: bfloat16 ``[sum(ks), N]``, both contiguous (M and N
      multiples of 8); group g's rows follow the earlier groups'.
    - d: float32 ``[G, M, N]`` contiguous.
    - ``ks`` (DeepGEMM: ``ks_cpu``): host list of the G group sizes, each a multiple of 64
      (0 allowed), their sum at most 2^31 - 1. ``ks_tensor`` (DeepGEMM: ``grouped_layout``):
      int32 ``[G]`` on d's device holding the same values, read by the kernel.
    - c: None (d is overwritten; a group with K_g = 0 gets zeros), d itself (accumulate in
      place), or a float32 ``[G, M, N]`` tensor, copied into d on the stream first.
    - sum(ks) = 0: d becomes c, or zeros, without a launch.
    - ``compiled_dims`` is accepted and ignored; ``use_psum_layout`` must be False;
      ``epilogue`` must be None.

    Runs on the current stream of d's device; returns without synchronizing. A thin wrapper
    over the custom op ``torch.ops.dgemm.k_grouped_bf16_gemm_tn_contiguous`` (mutates d).
    """
    ks = _resolve_alias("ks", ks, "ks_cpu", ks_cpu, _MISSING)
    if ks is _MISSING or ks is None:
        raise TypeError("ks (DeepGEMM: ks_cpu) is required: the host list of the G group sizes")
    ks_tensor = _resolve_alias("ks_tensor", ks_tensor, "grouped_layout", grouped_layout,
                               _MISSING)
    if ks_tensor is _MISSING or ks_tensor is None:
        raise TypeError("ks_tensor (DeepGEMM: grouped_layout) is required: an int32 tensor of "
                        "the G group sizes on d's device")
    bf16_rules.check_compiled_dims(compiled_dims)
    _checks.check_use_psum_layout(use_psum_layout)
    bf16_rules.check_epilogue(epilogue)
    ks = list(_checks.normalize_ks(_host_ks(ks), multiple=K_GROUP_ALIGNMENT))
    d = rules.tensor("d", d, torch.float32, 3)
    bf16_rules.check_c(c, d)
    accumulate, copy_from = bf16_rules.accumulation(c, d)
    if copy_from is not None:
        _check_k_grouped(a, b, d, ks, ks_tensor, addresses=False)
        d.copy_(copy_from)
    torch.ops.dgemm.k_grouped_bf16_gemm_tn_contiguous(a, b, d, ks, ks_tensor, accumulate)
