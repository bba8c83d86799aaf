"""The m-grouped BF16 GEMMs (the MoE forward and data gradient, and the decode step).

Drop-in for DeepGEMM's SM90 ``m_grouped_bf16_gemm_nt_contiguous``,
``m_grouped_bf16_gemm_nn_contiguous`` and ``m_grouped_bf16_gemm_nt_masked``: BF16 operands
without scales, FP32 accumulation, BF16 d. The row mappings are the FP8 1D2D kernels'
(per-row grouped layout, prefix sums, masked counts); layouts in docs/KernelABI.md ("The BF16
kernels").
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from . import _bf16_checks as bf16_rules
from . import _fp8_1d2d as rules
from . import _runtime
from .m_grouped import _check_layout_values, _check_psum_values, psum_hint


def _grouped_b_major(b: torch.Tensor) -> int:
    """b ``[G, N, K]``: contiguous (K-major) or the transpose of a contiguous ``[G, K, N]``
    (MN-major, ``x.mT``), the layouts whose rows the kernel's one map of B stacks."""
    g, n, k = b.shape
    if b.is_contiguous():
        return bf16_rules.K_MAJOR
    if b.transpose(1, 2).is_contiguous():
        return bf16_rules.MN_MAJOR
    raise ValueError(f"b must be a contiguous [G, N, K] tensor (K-major) or the transpose "
                     f"b.mT of a contiguous [G, K, N] one (MN-major), got shape {list(b.shape)} "
                     f"and strides {tuple(b.stride())}")


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"K must be positive, got {k}")
    if k % bf16_rules.STRIDE_MULTIPLE != 0:
        raise ValueError(f"K must be a multiple of 8 (a's rows of K elements must be 16-byte "
                         f"aligned for TMA), got {k}")


def _check_contiguous(a, b, d, gl, use_psum_layout, addresses):
    """Every rule of the contiguous GEMM on the op's arguments (b ``[G, N, K]`` of either
    majorness); returns (G, M_sum, N, K, major_b)."""
    a = bf16_rules.bf16("a", a, 2)
    b = bf16_rules.bf16("b", b, 3)
    d = rules.tensor("d", d, torch.bfloat16, 2)
    gl = rules.tensor("grouped_layout", gl, torch.int32, 1)
    m, k = a.shape
    g, n, kb = b.shape
    if kb != k:
        raise ValueError(f"b must be [G, N, K] with K = {k} (a's; [G, K, N] in the nn form), "
                         f"got {list(b.shape)}")
    if g < 1:
        raise ValueError(f"num_groups G = b.shape[0] must be >= 1, got {g}")
    _check_k(k)
    if n < 8 or n % 8 != 0:
        raise ValueError(f"N must be a positive multiple of 8 (16-byte rows of d), got {n}")
    bf16_rules.check_extents((("M_sum", m), ("N", n), ("K", k), ("G * N", g * n)))
    gl_shape = (((g,), " ([G] prefix sums with use_psum_layout=True)") if use_psum_layout
                else ((m,), " ([M_sum], one expert per row)"))
    rules.check_shapes((("d", d, (m, n), ""), ("grouped_layout", gl, *gl_shape)))
    rules.check_contiguous((("a", a), ("d", d), ("grouped_layout", gl)))
    major_b = _grouped_b_major(b)
    if major_b == bf16_rules.MN_MAJOR:
        if k % 64 != 0:
            raise ValueError(f"K must be a multiple of 64 with an MN-major b ([G, K, N]): a "
                             f"64-deep K block past a group's K rows would read the next "
                             f"group's, got {k}")
        bf16_rules.check_extents((("G * K", g * k),))
    bf16_rules.check_placement((("a", a, 16), ("b", b, 16), ("d", d, 16),
                                ("grouped_layout", gl, 4)), d, addresses)
    return g, m, n, k, major_b


# The contiguous GEMM as a torch custom op (torch.ops.dgemm.m_grouped_bf16_gemm_contiguous),
# both layouts of the rows (use_psum_layout) and both of b (its strides): it writes d and
# returns nothing. expected_m 0: no hint.
@torch.library.custom_op("dgemm::m_grouped_bf16_gemm_contiguous", mutates_args=("d",))
def _contiguous_op(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor,
                   grouped_layout: torch.Tensor, use_psum_layout: bool,
                   expected_m: int) -> None:
    g, m, n, k, major_b = _check_contiguous(a, b, d, grouped_layout, use_psum_layout,
                                            addresses=True)
    if m == 0:
        return
    _runtime.load()
    with torch.cuda.device(d.device):
        stream = torch.cuda.current_stream(d.device)
        _runtime.m_grouped_bf16_launch(
            a.data_ptr(), b.data_ptr(), major_b, d.data_ptr(), grouped_layout.data_ptr(), m, n,
            k, g, expected_m if use_psum_layout else None, stream.cuda_stream)


@_contiguous_op.register_fake
def _contiguous_fake(a, b, d, grouped_layout, use_psum_layout, expected_m) -> None:
    # Every rule but the pointer ones, so a traced call fails as an eager one would.
    _check_contiguous(a, b, d, grouped_layout, use_psum_layout, addresses=False)
    return None


def _contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding,
                expected_m_for_psum_layout, epilogue, check_grouped_layout) -> None:
    bf16_rules.check_compiled_dims(compiled_dims)
    bf16_rules.check_epilogue(epilogue)
    for name, flag in (("ensure_zero_padding", ensure_zero_padding),
                       ("check_grouped_layout", check_grouped_layout)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    expected_m = psum_hint(use_psum_layout, expected_m_for_psum_layout)
    if check_grouped_layout:
        g, m, _, _, _ = _check_contiguous(a, b, d, grouped_layout, use_psum_layout,
                                          addresses=False)
        if m and use_psum_layout:
            _check_psum_values(grouped_layout, m)
        elif m:
            _check_layout_values(grouped_layout, g)
    torch.ops.dgemm.m_grouped_bf16_gemm_contiguous(a, b, d, grouped_layout, use_psum_layout,
                                                   expected_m)


def m_grouped_bf16_gemm_nt_contiguous(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    grouped_layout: torch.Tensor,
    compiled_dims: str = "nk",
    use_psum_layout: bool = False,
    ensure_zero_padding: bool = True,
    expected_m_for_psum_layout: Optional[int] = None,
    epilogue: Any = None,
    *,
    check_grouped_layout: bool = True,
) -> None:
    """``d[r] = a[r] . b[e]^T`` for every row r of an expert e.

    - a: bfloat16 ``[M_sum, K]`` contiguous (K a positive multiple of 8).
    - b: bfloat16 ``[G, N, K]``: contiguous (K-major), or the transpose ``x.mT`` of a
      contiguous ``[G, K, N]`` (MN-major; then K a multiple of 64).
    - d: bfloat16 ``[M_sum, N]`` contiguous (N a multiple of 8); rows of no expert (padding,
      gaps) are not written.
    - grouped_layout: int32 on d's device; without ``use_psum_layout`` ``[M_sum]``, the
      expert of each row or -1, every expert's rows starting at a multiple of 128
      (``get_mk_alignment_for_contiguous_layout()``); with ``use_psum_layout=True`` ``[G]``,
      the prefix sums of the experts' rows (expert e's rows
      ``[align(psum[e - 1], 128), psum[e])``). The kernel reads it on the device.
    - ``expected_m_for_psum_layout`` (psum only): None or the expected rows per expert.
    - ``compiled_dims`` and ``ensure_zero_padding`` (DeepGEMM's SM100 kernels zero the
      padding rows of d; its SM90 ones, like these, leave them) are accepted and ignored;
      ``epilogue`` must be None.
    - ``check_grouped_layout`` (keyword): check grouped_layout's values on the device first
      (one synchronization; pass False under CUDA graph capture or torch.compile), as
      ``m_grouped_fp8_gemm_nt_contiguous`` does.

    Runs on the current stream of d's device; returns without synchronizing (unless
    ``check_grouped_layout``). A thin wrapper over the custom op
    ``torch.ops.dgemm.m_grouped_bf16_gemm_contiguous`` (mutates d).
    """
    _contiguous(a, b, d, grouped_layout, compiled_dims, use_psum_layout, ensure_zero_padding,
                expected_m_for_psum_layout, epilogue, check_grouped_layout)


def m_grouped_bf16_gemm_nn_contiguous(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    grouped_layout: torch.Tensor,
    compiled_dims: str = "nk",
    use_psum_layout: bool = False,
    ensure_zero_padding: bool = True,
    epilogue: Any = None,
    *,
    check_grouped_layout: bool = True,
) -> None:
    """``d[r] = a[r] . b[e]`` with b bfloat16 ``[G, K, N]`` (contiguous: MN-major; K a
    multiple of 64): ``m_grouped_bf16_gemm_nt_contiguous`` with ``b.mT``."""
    if not isinstance(b, torch.Tensor):
        raise TypeError(f"b must be a torch.Tensor, got {type(b).__name__}")
    if b.dim() != 3:
        raise ValueError(f"b must have 3 dimensions ([G, K, N]), got shape {list(b.shape)}")
    _contiguous(a, b.transpose(1, 2), d, grouped_layout, compiled_dims, use_psum_layout,
                ensure_zero_padding, None, epilogue, check_grouped_layout)


def _check_masked(a, b, d, masked_m, expected_m, addresses):
    """Every rule of the masked GEMM on the op's arguments; returns (G, M_max, N, K)."""
    a = bf16_rules.bf16("a", a, 3)
    b = bf16_rules.bf16("b", b, 3)
    d = rules.tensor("d", d, torch.bfloat16, 3)
    masked_m = rules.tensor("masked_m", masked_m, torch.int32, 1)
    rules.int_at_least("expected_m", expected_m, 1)
    g, m_max, k = a.shape
    if g < 1 or m_max < 1:
        raise ValueError(f"a must be [G, M_max, K] with G and M_max positive, got "
                         f"{list(a.shape)}")
    if tuple(b.shape[::2]) != (g, k):
        raise ValueError(f"b must be [G, N, K] with G = {g} and K = {k} (a's), got "
                         f"{list(b.shape)}")
    n = b.shape[1]
    _check_k(k)
    if n < 8 or n % 8 != 0:
        raise ValueError(f"N must be a positive multiple of 8 (16-byte rows of d), got {n}")
    bf16_rules.check_extents((("G * M_max", g * m_max), ("N", n), ("K", k), ("G * N", g * n)))
    rules.check_shapes((("d", d, (g, m_max, n), ""), ("masked_m", masked_m, (g,), "")))
    rules.check_contiguous((("a", a), ("b", b), ("d", d), ("masked_m", masked_m)))
    bf16_rules.check_placement((("a", a, 16), ("b", b, 16), ("d", d, 16),
                                ("masked_m", masked_m, 4)), d, addresses)
    return g, m_max, n, k


# The masked GEMM as a torch custom op (torch.ops.dgemm.m_grouped_bf16_gemm_nt_masked).
@torch.library.custom_op("dgemm::m_grouped_bf16_gemm_nt_masked", mutates_args=("d",))
def _masked_op(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, masked_m: torch.Tensor,
               expected_m: int) -> None:
    g, m_max, n, k = _check_masked(a, b, d, masked_m, expected_m, addresses=True)
    _runtime.load()
    with torch.cuda.device(d.device):
        stream = torch.cuda.current_stream(d.device)
        _runtime.masked_bf16_launch(a.data_ptr(), b.data_ptr(), d.data_ptr(),
                                    masked_m.data_ptr(), m_max, n, k, g, expected_m,
                                    stream.cuda_stream)


@_masked_op.register_fake
def _masked_fake(a, b, d, masked_m, expected_m) -> None:
    _check_masked(a, b, d, masked_m, expected_m, addresses=False)
    return None


def m_grouped_bf16_gemm_nt_masked(
    a: torch.Tensor,
    b: torch.Tensor,
    d: torch.Tensor,
    masked_m: torch.Tensor,
    expected_m: int,
    compiled_dims: str = "nk",
    epilogue: Any = None,
) -> None:
    """``d[g, r] = a[g, r] . b[g]^T`` for every row ``r < masked_m[g]``.

    - a: bfloat16 ``[G, M_max, K]``, b: bfloat16 ``[G, N, K]``, d: bfloat16
      ``[G, M_max, N]``, all contiguous; K a multiple of 8, N a multiple of 8, G * M_max at
      most 2^31 - 1. Rows ``r >= masked_m[g]`` are neither computed nor written.
    - masked_m: int32 ``[G]`` on d's device, read by the kernel only (never by the host, so
      a CUDA graph replays with the counts it holds then); a count outside ``[0, M_max]`` is
      clamped into it.
    - expected_m: a positive int, the rows per group the kernel choice plans for.
    - ``compiled_dims`` is accepted and ignored; ``epilogue`` must be None.

    A thin wrapper over the custom op ``torch.ops.dgemm.m_grouped_bf16_gemm_nt_masked``.
    """
    bf16_rules.check_compiled_dims(compiled_dims)
    bf16_rules.check_epilogue(epilogue)
    rules.int_at_least("expected_m", expected_m, 1)
    torch.ops.dgemm.m_grouped_bf16_gemm_nt_masked(a, b, d, masked_m, expected_m)
