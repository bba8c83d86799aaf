"""The normal BF16 GEMM, ``d = a . b^T (+ c)``, in DeepGEMM's four layouts.

Drop-in for DeepGEMM's SM90 ``bf16_gemm_nt``, ``bf16_gemm_nn``, ``bf16_gemm_tn`` and
``bf16_gemm_tt``: BF16 operands without scales, FP32 accumulation, a BF16 or FP32 d, an FP32
d optionally accumulated. Each operand may be K-major or MN-major, chosen from its strides as
DeepGEMM does; the four names only say how a and b are given (nn: b is ``[K, N]``, tn: a is
``[K, M]`` and b ``[K, N]``, tt: a is ``[K, M]``). Layouts: docs/KernelABI.md ("The BF16
kernels").
"""

from __future__ import annotations

from typing import Any, Optional

import torch

from . import _bf16_checks as bf16_rules
from . import _fp8_1d2d as rules
from . import _runtime


def _check_gemm(a, b, d, accumulate, addresses):
    """Every rule of the normal BF16 GEMM on the op's arguments (a ``[M, K]``, b ``[N, K]``
    views); returns (M, N, K, major_a, lda, major_b, ldb)."""
    a = bf16_rules.bf16("a", a, 2)
    b = bf16_rules.bf16("b", b, 2)
    d = bf16_rules.output("d", d, 2, (torch.bfloat16, torch.float32))
    m, k = a.shape
    n, kb = b.shape
    if kb != k:
        raise ValueError(f"b must be [N, K] with K = {k} (a's; in the nn and tn forms b is "
                         f"[K, N]), got K = {kb}")
    rules.check_shapes((("d", d, (m, n), " ([M, N])"),))
    if n:
        bf16_rules.check_n(n)
    bf16_rules.check_extents((("M", m), ("N", n), ("K", k)))
    if accumulate and d.dtype != torch.float32:
        raise ValueError("accumulate needs an FP32 d: only an FP32 d accumulates")
    rules.check_contiguous((("d", d),))
    major_a = lda = major_b = ldb = 0
    if m and n and k:  # an empty problem launches nothing: its strides do not matter
        major_a, lda = bf16_rules.major_and_stride("a", a)
        major_b, ldb = bf16_rules.major_and_stride("b", b)
    bf16_rules.check_placement((("a", a, 16), ("b", b, 16), ("d", d, 16)), d, addresses)
    return m, n, k, major_a, lda, major_b, ldb


# The GEMM as a torch custom op (torch.ops.dgemm.bf16_gemm): a [M, K] and b [N, K] views of
# either majorness; it writes d and returns nothing. accumulate: d += a . b^T (FP32 d).
@torch.library.custom_op("dgemm::bf16_gemm", mutates_args=("d",))
def _gemm_op(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor, accumulate: bool) -> None:
    m, n, k, major_a, lda, major_b, ldb = _check_gemm(a, b, d, accumulate, addresses=True)
    if m == 0 or n == 0:
        return
    with torch.cuda.device(d.device):
        if k == 0:
            # Nothing to multiply: d = c (already in d) or zeros, without a launch.
            if not accumulate:
                d.zero_()
            return
        _runtime.load()
        stream = torch.cuda.current_stream(d.device)
        _runtime.bf16_launch(a.data_ptr(), lda, major_a, b.data_ptr(), ldb, major_b,
                             d.data_ptr(), d.dtype == torch.float32, accumulate, m, n, k,
                             stream.cuda_stream)


@_gemm_op.register_fake
def _gemm_fake(a, b, d, accumulate) -> None:
    # Every rule but the pointer ones, so a traced call fails as an eager one would.
    _check_gemm(a, b, d, accumulate, addresses=False)
    return None


def _gemm(a: Any, b: Any, d: Any, c: Any, compiled_dims: Any, alpha: Any,
          epilogue: Any) -> None:
    """The four layouts' common body: a ``[M, K]`` and b ``[N, K]`` views."""
    bf16_rules.check_compiled_dims(compiled_dims)
    if alpha is not None:
        raise ValueError("alpha must be None: DeepGEMM's SM90 BF16 kernels do not scale "
                         "(alpha needs its SM100 kernels)")
    bf16_rules.check_epilogue(epilogue)
    d = bf16_rules.output("d", d, 2, (torch.bfloat16, torch.float32))
    bf16_rules.check_c(c, d)
    accumulate, copy_from = bf16_rules.accumulation(c, d)
    if copy_from is not None:
        # The kernel accumulates into d only: c is copied into d first, on the stream.
        _check_gemm(a, b, d, accumulate, addresses=False)
        d.copy_(copy_from)
    torch.ops.dgemm.bf16_gemm(a, b, d, accumulate)


def _transposed(name: str, t: Any) -> Any:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 2:
        raise ValueError(f"{name} must have 2 dimensions, got shape {list(t.shape)}")
    return t.t()


def bf16_gemm_nt(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor,
                 c: Optional[torch.Tensor] = None, compiled_dims: str = "nk",
                 alpha: Optional[float] = None, epilogue: Any = None) -> None:
    """``d = a . b^T (+ c)``: a bfloat16 ``[M, K]``, b bfloat16 ``[N, K]``.

    - a and b: any strides where one dimension has stride 1 and the other is a multiple of 8
      elements (16 bytes) and at least the row's length; K-major when ``stride(1) == 1``
      (DeepGEMM's rule), MN-major otherwise (e.g. ``x.t()`` of a contiguous ``[K, M]``).
    - d: bfloat16 or float32 ``[M, N]``, contiguous; N a multiple of 8.
    - c: None (d is overwritten), d itself (d += a . b^T), or a float32 ``[M, N]`` tensor,
      copied into d on the stream first (DeepGEMM's way). Only an FP32 d accumulates: a c
      with a BF16 d is refused.
    - K = 0: d becomes c, or zeros, without a launch; M = 0 or N = 0: nothing to do.
    - ``compiled_dims`` is accepted and ignored; ``alpha`` and ``epilogue`` (SM100 only in
      DeepGEMM) must be None.

    Runs on the current stream of d's device and returns without synchronizing. Raises
    TypeError/ValueError for bad arguments before launching, RuntimeError if the runtime
    library is missing or the launch fails. A thin wrapper over the custom op
    ``torch.ops.dgemm.bf16_gemm`` (mutates d; its fake implementation checks every rule but
    the pointer ones).
    """
    _gemm(a, b, d, c, compiled_dims, alpha, epilogue)


def bf16_gemm_nn(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor,
                 c: Optional[torch.Tensor] = None, compiled_dims: str = "nk",
                 alpha: Optional[float] = None, epilogue: Any = None) -> None:
    """``d = a . b (+ c)``: a ``[M, K]``, b ``[K, N]`` (bf16_gemm_nt with ``b.t()``)."""
    _gemm(a, _transposed("b", b), d, c, compiled_dims, alpha, epilogue)


def bf16_gemm_tn(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor,
                 c: Optional[torch.Tensor] = None, compiled_dims: str = "mn",
                 alpha: Optional[float] = None, epilogue: Any = None) -> None:
    """``d = a^T . b (+ c)``: a ``[K, M]``, b ``[K, N]`` (bf16_gemm_nt with ``a.t()``,
    ``b.t()``)."""
    _gemm(_transposed("a", a), _transposed("b", b), d, c, compiled_dims, alpha, epilogue)


def bf16_gemm_tt(a: torch.Tensor, b: torch.Tensor, d: torch.Tensor,
                 c: Optional[torch.Tensor] = None, compiled_dims: str = "mn",
                 alpha: Optional[float] = None, epilogue: Any = None) -> None:
    """``d = a^T . b^T (+ c)``: a ``[K, M]``, b ``[N, K]`` (bf16_gemm_nt with ``a.t()``)."""
    _gemm(_transposed("a", a), b, d, c, compiled_dims, alpha, epilogue)
