"""Argument rules the FP8 1D2D entry points share (masked, normal).

Each rule raises TypeError (a wrong type or dtype) or ValueError (a wrong value, shape,
layout, device or address) naming the argument and the rule. ``addresses=False`` leaves
out the pointer rules, for fake and meta tensors (the custom ops' fake implementations).
"""

from __future__ import annotations

from typing import Any, Iterable, Tuple

import torch

BLOCK_K = 128
_MAX_EXTENT = 2**31 - 1


def check_recipe(recipe: Any) -> None:
    if recipe is not None and tuple(recipe) != (1, 128, 128):
        raise ValueError(f"recipe must be None or (1, 128, 128) (the 1D2D recipe), got {recipe}")


def check_flags(compiled_dims: Any, disable_ue8m0_cast: Any) -> None:
    """DeepGEMM's ``compiled_dims`` and ``disable_ue8m0_cast``: accepted and ignored (the
    kernels take the extents at launch and the scales as FP32)."""
    if not isinstance(compiled_dims, str):
        raise TypeError(f"compiled_dims must be a str, got {type(compiled_dims).__name__}")
    if not isinstance(disable_ue8m0_cast, bool):
        raise TypeError(
            f"disable_ue8m0_cast must be a bool, got {type(disable_ue8m0_cast).__name__}")


def split_pair(name: str, x: Any) -> Tuple[Any, Any]:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise TypeError(f"{name} must be a pair (fp8 tensor, float32 scales), got "
                        f"{type(x).__name__}")
    return x[0], x[1]


def tensor(name: str, t: Any, dtype: torch.dtype, dims: int) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype != dtype:
        raise TypeError(f"{name} must be {dtype}, got {t.dtype}")
    if t.dim() != dims:
        raise ValueError(f"{name} must have {dims} dimensions, got shape {list(t.shape)}")
    return t


def check_extents(m_name: str, m: int, n: int, k: int) -> None:
    """N a positive multiple of 8 (16-byte rows of the BF16 d), K a positive multiple of 128."""
    if k < BLOCK_K or k % BLOCK_K != 0:
        raise ValueError(f"K must be a positive multiple of {BLOCK_K} (the FP8 scales cover "
                         f"128-deep K blocks), got {k}")
    if n < 8 or n % 8 != 0:
        raise ValueError(f"N must be a positive multiple of 8 (16-byte rows of the BF16 d), got {n}")
    for name, value in ((m_name, m), ("N", n), ("K", k)):
        if value > _MAX_EXTENT:
            raise ValueError(f"{name} = {value} exceeds the kernel's limit of {_MAX_EXTENT}")


def tma_aligned(m: int) -> int:
    """M rounded up to a multiple of 4 (16 bytes of FP32): the scale rows' stride."""
    return (m + 3) // 4 * 4


def check_sfa_layout(sfa: torch.Tensor) -> None:
    """sfa ``[M, K/128]`` or ``[G, M, K/128]`` in get_mn_major_tma_aligned_tensor's layout:
    strides ``(1, align(M, 4))`` per group, groups ``align(M, 4) * K/128`` apart."""
    *g, m, kb = sfa.shape
    aligned = tma_aligned(m)
    strides = sfa.stride()
    ok = (m <= 1 or strides[-2] == 1) and (kb <= 1 or strides[-1] == aligned)
    if g and g[0] > 1:
        ok = ok and strides[0] == aligned * kb
    if not ok:
        want = ((aligned * kb,) if g else ()) + (1, aligned)
        raise ValueError(f"sfa must be MN-major with TMA-aligned rows (strides {want}, "
                         f"get_mn_major_tma_aligned_tensor's layout), got strides {tuple(strides)}")


def check_shapes(named: Iterable[Tuple[str, torch.Tensor, Tuple[int, ...], str]]) -> None:
    """Each tensor's shape equal to the one wanted; ``what`` (may be "") says what it means."""
    for name, t, want, what in named:
        if tuple(t.shape) != tuple(want):
            raise ValueError(f"{name} must have shape {list(want)}{what}, got {list(t.shape)}")


def check_contiguous(named: Iterable[Tuple[str, torch.Tensor]]) -> None:
    for name, t in named:
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous")


def check_devices(named: Iterable[Tuple[str, torch.Tensor]], d: torch.Tensor) -> None:
    named = list(named)
    for name, t in named:
        if t.device.type != "cuda":
            raise ValueError(f"{name} must be a CUDA tensor, got device {str(t.device)!r}")
    for name, t in named:
        if t.device != d.device:
            raise ValueError(f"{name} is on {t.device} but d is on {d.device}: all tensors "
                             "must be on one CUDA device")


def check_alignment(named: Iterable[Tuple[str, torch.Tensor, int]]) -> None:
    """Each tensor's data pointer a multiple of its alignment (TMA: 16 bytes)."""
    for name, t, align in named:
        if t.numel() > 0 and t.data_ptr() % align != 0:
            raise ValueError(f"{name}'s data pointer {t.data_ptr():#x} is not {align}-byte "
                             "aligned (a view with a storage offset can cause this)")


def dequantized_rows(x: torch.Tensor, sf: torch.Tensor) -> torch.Tensor:
    """FP32 ``x * sf`` with one scale per row and 128-wide K block: x ``[R, K]``, sf
    ``[R, K/128]`` (any strides)."""
    r, k = x.shape
    return (x.float().view(r, k // BLOCK_K, BLOCK_K)
            * sf.float().reshape(r, k // BLOCK_K, 1)).view(r, k)


def dequantized_blocks(w: torch.Tensor, sf: torch.Tensor) -> torch.Tensor:
    """FP32 ``w * sf`` with one scale per 128x128 block: w ``[N, K]``, sf
    ``[ceil(N/128), K/128]``."""
    n, k = w.shape
    full = sf.float().repeat_interleave(BLOCK_K, dim=0)[:n].repeat_interleave(BLOCK_K, dim=1)
    return w.float() * full[:, :k]


def int_at_least(name: str, value: Any, minimum: int) -> int:
    """An int (not a bool) of at least ``minimum`` (a SymInt while tracing)."""
    if isinstance(value, bool) or not isinstance(value, (int, torch.SymInt)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value
