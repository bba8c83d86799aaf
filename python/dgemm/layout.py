"""Operand preparation and the reference for the k-grouped FP8 GEMM.

``x`` below is a token-major activation or gradient of shape ``(T, C)``: T
tokens (the GEMM's K, split into groups of ``ks[g]`` consecutive tokens) by C
channels (the GEMM's M or N).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import torch

from . import _checks

FP8_MAX = 448.0
# Lower bound on every scale, so that 1/sf stays finite in float32 (the seed
# report's cast clamps the same way).
SF_MIN = 1e-30
# DeepGEMM's per_channel_cast_to_fp8 floors the channel amax at 1e-4, so an
# all-zero channel gets the scale 1e-4 / 448.
DEFAULT_AMAX_FLOOR = 1e-4
DEFAULT_SF_ZERO = DEFAULT_AMAX_FLOOR / FP8_MAX


def _check_tensor(name: str, x, ndim: Optional[int] = None) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if ndim is not None and x.dim() != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {list(x.shape)}")


def _ceil_to_ue8m0(sf: torch.Tensor) -> torch.Tensor:
    # Rounds each scale up to a power of two (DeepGEMM's UE8M0 scales), still FP32.
    bits = sf.abs().float().view(torch.int32)
    exp = ((bits >> 23) & 0xFF) + (bits & 0x7FFFFF).bool().int()
    return (exp.clamp(1, 254) << 23).view(torch.float32)


def per_channel_cast_to_fp8(
    x: torch.Tensor,
    use_ue8m0: bool = False,
    gran_k: int = 128,
    *,
    amax_floor: float = DEFAULT_AMAX_FLOOR,
    sf_zero: float = DEFAULT_SF_ZERO,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """Per-channel FP8 cast over blocks of ``gran_k`` tokens; returns ``(fp8, sf)``.

    ``x`` is ``(T, C)`` with T a multiple of ``gran_k``; ``fp8`` is float8_e4m3fn
    ``(T, C)`` and ``sf`` float32 ``(T / gran_k, C)`` with
    ``x[t, ch] ~= fp8[t, ch] * sf[t // gran_k, ch]``:

    - ``sf = max(amax, amax_floor) / 448`` per block and channel;
    - a scale that is 0 (an all-zero channel with ``amax_floor=0``) becomes ``sf_zero``;
    - with ``use_ue8m0``, scales are rounded up to powers of two;
    - every scale is clamped to at least ``SF_MIN`` (1e-30).

    The defaults give DeepGEMM's ``per_channel_cast_to_fp8(x, use_ue8m0=False)``.
    ``amax_floor=0, sf_zero=v`` gives the seed report's ``_per_channel_cast_to_fp8(x, sf_val=v)``.
    """
    _check_tensor("x", x, ndim=2)
    if not x.dtype.is_floating_point or x.element_size() == 1:
        raise TypeError(f"x must be a float16/bfloat16/float32/float64 tensor, got {x.dtype}")
    if not isinstance(use_ue8m0, bool):
        raise TypeError(f"use_ue8m0 must be a bool, got {type(use_ue8m0).__name__}")
    if isinstance(gran_k, bool) or not isinstance(gran_k, int) or gran_k < 1:
        raise ValueError(f"gran_k must be a positive int, got {gran_k!r}")
    t, ch = x.shape
    if t % gran_k != 0:
        raise ValueError(f"x.shape[0] = {t} tokens must be a multiple of gran_k = {gran_k}")
    if not (math.isfinite(amax_floor) and amax_floor >= 0):
        raise ValueError(f"amax_floor must be a finite float >= 0, got {amax_floor!r}")
    if not (math.isfinite(sf_zero) and sf_zero > 0):
        raise ValueError(f"sf_zero must be a finite float > 0, got {sf_zero!r}")

    x_view = x.reshape(t // gran_k, gran_k, ch)
    amax = x_view.abs().float().amax(dim=1)
    if amax_floor > 0:
        amax = amax.clamp(min=amax_floor)
    sf = amax / FP8_MAX
    sf = torch.where(sf == 0, torch.full_like(sf, sf_zero), sf)
    if use_ue8m0:
        sf = _ceil_to_ue8m0(sf)
    sf = sf.clamp_min(SF_MIN)
    fp8 = (x_view * (1.0 / sf.unsqueeze(1))).to(torch.float8_e4m3fn).view(t, ch)
    return fp8, sf


def _group_offsets(ks: Sequence[int]):
    start = 0
    for k in ks:
        yield start, k
        start += k


def pack_k_grouped_kmajor(fp8: torch.Tensor, ks: Sequence[int]) -> torch.Tensor:
    """Packs token-major ``fp8`` ``(T, C)`` into the kernel's K-major 1-D layout.

    Group g (tokens ``[P_g, P_g + K_g)``) becomes the ``C x K_g`` row-major block
    ``fp8[P_g:P_g+K_g].T`` at element ``C * P_g``; T must equal ``sum(ks)``.
    Works for any dtype.
    """
    _check_tensor("fp8", fp8, ndim=2)
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence):
        raise TypeError(f"ks must be a list or tuple of ints, got {type(ks).__name__}")
    for i, k in enumerate(ks):
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"ks[{i}] must be an int, got {type(k).__name__}")
        if k < 0:
            raise ValueError(f"ks[{i}] = {k} is negative")
    t, ch = fp8.shape
    if sum(ks) != t:
        raise ValueError(f"sum(ks) = {sum(ks)} does not match fp8.shape[0] = {t} tokens")
    out = torch.empty(t * ch, dtype=fp8.dtype, device=fp8.device)
    for start, k in _group_offsets(ks):
        if k:
            out[start * ch:(start + k) * ch].view(ch, k).copy_(fp8[start:start + k].t())
    return out


def make_k_grouped_operand(
    x: torch.Tensor,
    ks: Sequence[int],
    use_ue8m0: bool = False,
    *,
    amax_floor: float = DEFAULT_AMAX_FLOOR,
    sf_zero: float = DEFAULT_SF_ZERO,
) -> Tuple[torch.Tensor, torch.Tensor]:
    """One GEMM operand from token-major ``x`` ``(sum(ks), C)``: ``(packed_fp8, sf.T)``.

    ``packed_fp8`` is :func:`pack_k_grouped_kmajor` of the per-channel cast and
    ``sf.T`` the ``(C, sum(ks)/128)`` scale view with strides ``(1, C)``: the
    pair the GEMM takes as ``a`` (C = M) or ``b`` (C = N). Since every K_g is a
    multiple of 128, no 128-token block spans two groups, so casting the whole
    tensor at once equals casting each group separately.
    """
    _check_tensor("x", x, ndim=2)
    ks = _checks.normalize_ks(ks)
    if sum(ks) != x.shape[0]:
        raise ValueError(f"sum(ks) = {sum(ks)} does not match x.shape[0] = {x.shape[0]} tokens")
    fp8, sf = per_channel_cast_to_fp8(
        x, use_ue8m0, _checks.BLOCK_K, amax_floor=amax_floor, sf_zero=sf_zero)
    return pack_k_grouped_kmajor(fp8, list(ks)), sf.T


def _info(name: str, t: torch.Tensor) -> _checks.TensorInfo:
    _check_tensor(name, t)
    return _checks.TensorInfo(
        name=name, dtype=str(t.dtype).replace("torch.", ""), device=str(t.device),
        shape=tuple(t.shape), strides=tuple(t.stride()), data_ptr=0,
        element_size=t.element_size(), contiguous=t.is_contiguous())


def k_grouped_reference(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    ks: Sequence[int],
    m: int,
    n: int,
    c: Optional[torch.Tensor] = None,
    *,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """What the kernel computes, from the FP8 operands and scales: ``[G, m, n]`` in ``dtype``.

    ``d[g] = c[g] + sum_kb (A_g,kb . B_g,kb^T) * sfa[:, kb] (x) sfb[:, kb]``, with
    ``a``/``b`` as the GEMM takes them (any strides for the scales); on a's device.

    - ``float64``: each group's operands are dequantized (exactly: an FP8 value
      times an FP32 scale fits in float64) and multiplied in float64: the exact
      result up to float64 rounding.
    - ``float32``: in the kernel's order: per 128-token block an FP32 dot product
      of the FP8 values (their products are exact), scaled by ``sfa (x) sfb`` and
      accumulated in FP32.
    """
    if dtype not in (torch.float32, torch.float64):
        raise TypeError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    if not isinstance(a, (tuple, list)) or len(a) != 2:
        raise TypeError("a must be a pair (a_fp8, sfa)")
    if not isinstance(b, (tuple, list)) or len(b) != 2:
        raise TypeError("b must be a pair (b_fp8, sfb)")
    ks = _checks.normalize_ks(ks)
    for name, v in (("m", m), ("n", n)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    total_k = sum(ks)
    _checks.check_operand(_info("a", a[0]), _info("sfa", a[1]), m, "M", total_k, check_layout=False)
    _checks.check_operand(_info("b", b[0]), _info("sfb", b[1]), n, "N", total_k, check_layout=False)
    g = len(ks)
    device = a[0].device
    out = torch.zeros((g, m, n), dtype=dtype, device=device)
    if c is not None:
        _check_tensor("c", c)
        if tuple(c.shape) != (g, m, n):
            raise ValueError(f"c must have shape [G, M, N] = {[g, m, n]}, got {list(c.shape)}")
        out.copy_(c)

    # FP8 -> FP32 is exact; going through it avoids relying on direct FP8 -> FP64 casts.
    a_all = a[0].reshape(-1).to(device)
    b_all = b[0].reshape(-1).to(device)
    sfa = a[1].to(device=device, dtype=dtype)
    sfb = b[1].to(device=device, dtype=dtype)
    bk = _checks.BLOCK_K
    for gi, (start, k) in enumerate(_group_offsets(ks)):
        if k == 0:
            continue
        a_g = a_all[m * start:m * (start + k)].view(m, k).float().to(dtype)
        b_g = b_all[n * start:n * (start + k)].view(n, k).float().to(dtype)
        kb0, nkb = start // bk, k // bk
        if dtype == torch.float64:
            sa = sfa[:, kb0:kb0 + nkb].repeat_interleave(bk, dim=1)
            sb = sfb[:, kb0:kb0 + nkb].repeat_interleave(bk, dim=1)
            out[gi] += (a_g * sa) @ (b_g * sb).T
        else:
            for j in range(nkb):
                cols = slice(j * bk, (j + 1) * bk)
                partial = a_g[:, cols] @ b_g[:, cols].T
                out[gi] += partial * (sfa[:, kb0 + j, None] * sfb[:, kb0 + j][None, :])
    return out
