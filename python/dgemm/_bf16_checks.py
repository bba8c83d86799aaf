"""Argument rules the BF16 entry points share (normal, m-grouped, masked, k-grouped).

Each rule raises TypeError (a wrong type or dtype) or ValueError (a wrong value, shape,
layout, device or address) naming the argument and the rule, in the order of the other
entry points: types and dtypes, then values, shapes and strides, then devices, then
pointers. The generic helpers are the FP8 1D2D entries' (``_fp8_1d2d``). Layouts:
docs/KernelABI.md ("The BF16 kernels").
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Tuple

import torch

from . import _fp8_1d2d as rules

MAX_EXTENT = 2**31 - 1
# Row strides of the operands, in BF16 elements: TMA's global strides are multiples of
# 16 bytes.
STRIDE_MULTIPLE = 8
K_MAJOR, MN_MAJOR = 0, 1


def bf16(name: str, t: Any, dims: int) -> torch.Tensor:
    return rules.tensor(name, t, torch.bfloat16, dims)


def output(name: str, t: Any, dims: int, dtypes: Tuple[torch.dtype, ...]) -> torch.Tensor:
    """d (or c): a tensor of one of ``dtypes`` with ``dims`` dimensions."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype not in dtypes:
        names = " or ".join(str(d) for d in dtypes)
        raise TypeError(f"{name} must be {names}, got {t.dtype}")
    if t.dim() != dims:
        raise ValueError(f"{name} must have {dims} dimensions, got shape {list(t.shape)}")
    return t


def major_and_stride(name: str, t: torch.Tensor) -> Tuple[int, int]:
    """The majorness and row stride of a 2-D operand viewed as ``[MN, K]`` (a ``[M, K]``,
    b ``[N, K]``), as DeepGEMM's ``get_major_type_ab`` decides it: K-major where the last
    dimension has stride 1 (rows of K elements, ``stride(0)`` apart), else MN-major where
    the first has (rows of MN elements, ``stride(1)`` apart). The stride must be a multiple
    of 8 elements (16 bytes, TMA) and at least the row's length; a single row's stride
    addresses nothing and is taken as the row's length rounded up to 8."""
    (mn, k), (s_mn, s_k) = t.shape, t.stride()
    if s_k == 1:
        major, stride, length, rows = K_MAJOR, s_mn, k, mn
    elif s_mn == 1:
        major, stride, length, rows = MN_MAJOR, s_k, mn, k
    else:
        raise ValueError(f"{name} must have a dimension of stride 1 (K-major: stride(1) == 1; "
                         f"MN-major: stride(0) == 1), got strides {tuple(t.stride())}")
    if rows <= 1:
        return major, max(STRIDE_MULTIPLE, (length + 7) // 8 * 8)
    kind = "K-major" if major == K_MAJOR else "MN-major"
    if stride % STRIDE_MULTIPLE != 0:
        raise ValueError(f"{name}'s row stride ({kind}: {stride} elements) must be a multiple "
                         f"of {STRIDE_MULTIPLE} (16 bytes, for TMA); pad its rows or make it "
                         f"contiguous, got strides {tuple(t.stride())}")
    if stride < length:
        raise ValueError(f"{name}'s row stride ({kind}: {stride} elements) must be at least "
                         f"its row length {length}, got strides {tuple(t.stride())}")
    return major, stride


def check_extents(named: Iterable[Tuple[str, int]]) -> None:
    for name, value in named:
        if value > MAX_EXTENT:
            raise ValueError(f"{name} = {value} exceeds the kernel's limit of {MAX_EXTENT}")


def check_n(n: int) -> None:
    if n % 8 != 0:
        raise ValueError(f"N must be a multiple of 8 (16-byte rows of d), got {n}")


def check_epilogue(epilogue: Any) -> None:
    """DeepGEMM's ``epilogue`` (custom epilogues, SM100 only): None."""
    if epilogue is not None:
        raise ValueError("epilogue must be None: custom epilogues are DeepGEMM's SM100 "
                         "feature, which the SM90 kernels do not have")


def check_compiled_dims(compiled_dims: Any) -> None:
    """DeepGEMM's JIT hint: a str, accepted and ignored."""
    if not isinstance(compiled_dims, str):
        raise TypeError(f"compiled_dims must be a str, got {type(compiled_dims).__name__}")


def accumulation(c: Optional[torch.Tensor], d: torch.Tensor) -> Tuple[bool, Optional[torch.Tensor]]:
    """What ``c`` asks of an FP32 d: ``(accumulate, copy_from)``. None: overwrite d. d itself
    (or, eagerly, another view of exactly d's elements): accumulate into d. Another tensor:
    copied into d first, then accumulated (DeepGEMM's way)."""
    if c is None:
        return False, None
    if c is d:
        return True, None
    if (not torch.compiler.is_compiling() and type(c) is torch.Tensor
            and type(d) is torch.Tensor and c.is_cuda and d.is_cuda  # fakes have no address
            and c.data_ptr() == d.data_ptr() and c.shape == d.shape
            and c.stride() == d.stride() and c.dtype == d.dtype):
        return True, None
    return True, c


def check_c(c: Any, d: torch.Tensor) -> None:
    """c: None, d, or a float32 tensor of d's shape, contiguous, on d's device, not
    overlapping d; only an FP32 d accumulates."""
    if c is None or c is d:
        if c is not None and d.dtype != torch.float32:
            raise ValueError("c must be None for a BF16 d: only an FP32 d accumulates")
        return
    if not isinstance(c, torch.Tensor):
        raise TypeError(f"c must be None or a torch.Tensor, got {type(c).__name__}")
    if d.dtype != torch.float32:
        raise ValueError("c must be None for a BF16 d: only an FP32 d accumulates")
    if c.dtype != torch.float32:
        raise TypeError(f"c must be torch.float32 like d, got {c.dtype}")
    if tuple(c.shape) != tuple(d.shape):
        raise ValueError(f"c must have d's shape {list(d.shape)}, got {list(c.shape)}")
    if not c.is_contiguous():
        raise ValueError("c must be contiguous")
    if c.device != d.device:
        raise ValueError(f"c is on {c.device} but d is on {d.device}")
    if (not torch.compiler.is_compiling() and type(c) is torch.Tensor
            and type(d) is torch.Tensor and c.is_cuda  # fakes have no address
            and overlaps(c, d) and c.data_ptr() != d.data_ptr()):
        raise ValueError("c must either be d itself (accumulate in place) or not overlap d")


def span(t: torch.Tensor) -> Tuple[int, int]:
    """The bytes ``[begin, end)`` a view addresses (non-negative strides); empty: (p, p)."""
    begin = t.data_ptr()
    if t.numel() == 0:
        return begin, begin
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return begin, begin + (last + 1) * t.element_size()


def overlaps(x: torch.Tensor, y: torch.Tensor) -> bool:
    (xb, xe), (yb, ye) = span(x), span(y)
    return xb < xe and yb < ye and xb < ye and yb < xe


def check_placement(named: Iterable[Tuple[str, torch.Tensor, int]], d: torch.Tensor,
                    addresses: bool) -> None:
    """Every tensor a CUDA tensor on d's device; then, with ``addresses`` (not for fake and
    meta tensors), each data pointer aligned (16 bytes for TMA, 4 for the int32 arrays) and
    d, which the kernel writes, overlapping none of the others (they may overlap each
    other)."""
    named = list(named)
    rules.check_devices(((name, t) for name, t, _ in named), d)
    if not addresses:
        return
    rules.check_alignment(named)
    for name, t, _ in named:
        if t is not d and overlaps(d, t):
            raise ValueError(f"d must not overlap {name}: the kernel writes d while it reads "
                             f"{name}")
