"""The m-grouped contiguous FP8 GEMM (the MoE forward and data gradient).

Drop-in for DeepGEMM's SM90 ``m_grouped_fp8_gemm_nt_contiguous`` with the
1D2D recipe: per-token A scales on every 128-deep K block, 128x128 block B
scales, BF16 output. Layouts: docs/KernelABI.md ("The m-grouped kernel").
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import torch

from . import _fp8_1d2d as rules
from . import _runtime

_ALIGNMENT = 128
FP8_MAX = 448.0
_AMAX_FLOOR = 1e-4


def get_mk_alignment_for_contiguous_layout() -> int:
    """Rows per expert segment: each expert's rows start at a multiple of this."""
    return _ALIGNMENT


def get_tma_aligned_size(x: int, element_size: int) -> int:
    """``x`` rounded up so that ``x * element_size`` is a multiple of 16 bytes."""
    if element_size not in (1, 2, 4, 8):
        raise ValueError(f"element_size must be 1, 2, 4 or 8, got {element_size}")
    per = 16 // element_size
    return (x + per - 1) // per * per


def get_mn_major_tma_aligned_tensor(x: torch.Tensor) -> torch.Tensor:
    """``x`` (``[M, K]`` or ``[G, M, K]``) as an MN-major tensor whose M stride is TMA-aligned.

    Same values; strides ``(1, align(M, 16 / element_size))`` per group (a copy unless
    ``x`` already has that layout).
    """
    if not isinstance(x, torch.Tensor) or x.dim() not in (2, 3):
        raise ValueError("x must be a 2-D or 3-D tensor")
    squeeze = x.dim() == 2
    if squeeze:
        x = x.unsqueeze(0)
    g, m, k = x.shape
    aligned = get_tma_aligned_size(m, x.element_size())
    if x.stride(1) == 1 and x.stride(2) == aligned and (g == 1 or x.stride(0) == aligned * k):
        out = x
    else:
        out = torch.empty((g, k, aligned), dtype=x.dtype, device=x.device).transpose(1, 2)
        out = out[:, :m, :]
        out.copy_(x)
    return out.squeeze(0) if squeeze else out


def transform_sf_into_required_layout(
    sf: torch.Tensor,
    mn: int,
    k: int,
    recipe: Tuple[int, int, int],
    num_groups: Optional[int] = None,
    is_sfa: bool = False,
    disable_ue8m0_cast: bool = False,
) -> torch.Tensor:
    """Scales in the layout the SM90 kernels read (DeepGEMM's function of the same name).

    ``sf`` is float32 ``[ceil(mn / g0), ceil(k / g1)]`` (``[num_groups, ...]`` with groups) for
    the granularity ``(g0, g1) = (recipe[0] if is_sfa else recipe[1], recipe[2])``:

    - per-token scales, ``(1, 128)`` (sfa of every kernel, sfb of the 1D1D recipe): returned
      MN-major with a TMA-aligned MN stride (:func:`get_mn_major_tma_aligned_tensor`);
    - 128x128 block scales, ``(128, 128)`` (sfb of the 1D2D kernels, which read them from
      global memory row-major): returned contiguous.

    Packed UE8M0 scales (int32) are the SM100 kernels' format and are refused, as is any other
    granularity; ``disable_ue8m0_cast`` is accepted for DeepGEMM's signature (SM90 keeps FP32).
    """
    del disable_ue8m0_cast  # SM90: the scales stay FP32
    if not isinstance(sf, torch.Tensor):
        raise TypeError(f"sf must be a torch.Tensor, got {type(sf).__name__}")
    if len(tuple(recipe)) != 3:
        raise ValueError(f"recipe must have 3 entries, got {recipe!r}")
    gran = (recipe[0] if is_sfa else recipe[1], recipe[2])
    if sf.dtype != torch.float32:
        raise ValueError(f"sf must be float32 on SM90 (packed UE8M0 int32 scales are the SM100 "
                         f"kernels' format), got {sf.dtype}")
    if gran not in ((1, 128), (128, 128)):
        raise ValueError(f"scale granularity {gran} (recipe {tuple(recipe)}, is_sfa={is_sfa}) "
                         "is not one the SM90 kernels read: (1, 128) or (128, 128)")
    want_dim = 2 if num_groups is None else 3
    if sf.dim() != want_dim:
        raise ValueError(f"sf must be {want_dim}-D (num_groups={num_groups}), got "
                         f"{list(sf.shape)}")
    want = [(mn + gran[0] - 1) // gran[0], (k + gran[1] - 1) // gran[1]]
    if num_groups is not None:
        want = [num_groups] + want
    if list(sf.shape) != want:
        raise ValueError(f"sf must have shape {want} for mn={mn}, k={k} and granularity {gran}, "
                         f"got {list(sf.shape)}")
    if gran == (1, 128):
        return get_mn_major_tma_aligned_tensor(sf)
    return sf.contiguous()


def per_token_cast_to_fp8(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """``x`` ``[M, K]`` (K a multiple of 128) as FP8 with one FP32 scale per row and 128-wide K block.

    Returns ``(fp8 [M, K], sf [M, K / 128])`` with ``x ~= fp8 * sf`` blockwise,
    ``sf = max(amax, 1e-4) / 448`` (DeepGEMM's per_token_cast_to_fp8).
    """
    if x.dim() != 2 or x.shape[1] % 128 != 0:
        raise ValueError(f"x must be [M, K] with K a multiple of 128, got {list(x.shape)}")
    m, k = x.shape
    view = x.float().view(m, k // 128, 128)
    amax = view.abs().amax(dim=2).clamp(min=_AMAX_FLOOR)
    sf = amax / FP8_MAX
    fp8 = (view / sf.unsqueeze(2)).to(torch.float8_e4m3fn).view(m, k)
    return fp8, sf


def per_block_cast_to_fp8(x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """``x`` ``[N, K]`` as FP8 with one FP32 scale per 128x128 block.

    Returns ``(fp8 [N, K], sf [ceil(N / 128), ceil(K / 128)])`` (DeepGEMM's
    per_block_cast_to_fp8; the blocks past N or K are padded with zeros).
    """
    if x.dim() != 2:
        raise ValueError(f"x must be [N, K], got {list(x.shape)}")
    n, k = x.shape
    pn, pk = (n + 127) // 128 * 128, (k + 127) // 128 * 128
    padded = torch.zeros((pn, pk), dtype=torch.float32, device=x.device)
    padded[:n, :k] = x.float()
    view = padded.view(pn // 128, 128, pk // 128, 128)
    amax = view.abs().amax(dim=(1, 3), keepdim=True).clamp(min=_AMAX_FLOOR)
    sf = amax / FP8_MAX
    fp8 = (view / sf).to(torch.float8_e4m3fn).view(pn, pk)[:n, :k].contiguous()
    return fp8, sf.view(pn // 128, pk // 128)


def m_grouped_reference(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    grouped_layout: torch.Tensor,
) -> torch.Tensor:
    """FP32 reference of the dequantized operands: ``[M_sum, N]``, padding rows 0."""
    x, sfa = a
    w, sfb = b
    m, k = x.shape
    g, n, _ = w.shape
    xa = x.float().view(m, k // 128, 128) * sfa.float().reshape(m, k // 128, 1)
    sfb_full = sfb.float().repeat_interleave(128, dim=1)[:, :n, :].repeat_interleave(128, dim=2)
    wb = w.float() * sfb_full[:, :, :k]
    xa = xa.view(m, k)
    out = torch.zeros((m, n), dtype=torch.float32, device=x.device)
    layout = grouped_layout.long()
    for e in range(g):
        rows = (layout == e).nonzero().squeeze(1)
        if rows.numel():
            out[rows] = xa[rows] @ wb[e].t()
    return out


def _check_layout_values(grouped_layout: torch.Tensor, num_groups: int) -> None:
    """One device reduction and one synchronization: values in [-1, G), experts 128-aligned."""
    gl = grouped_layout
    m = gl.shape[0]
    first = gl[::_ALIGNMENT].repeat_interleave(_ALIGNMENT)[:m]
    out_of_range = ((gl < -1) | (gl >= num_groups)).any()
    misaligned = ((gl >= 0) & (gl != first)).any()
    flags = torch.stack([out_of_range, misaligned]).tolist()
    if flags[0]:
        raise ValueError(f"grouped_layout must hold experts in [0, {num_groups}) or -1 (padding)")
    if flags[1]:
        raise ValueError(
            f"grouped_layout: every expert's rows must start at a multiple of {_ALIGNMENT} "
            "(get_mk_alignment_for_contiguous_layout()) with padding (-1) at the end of its "
            "segment, so that no 128-row tile holds two experts")


def m_grouped_fp8_gemm_nt_contiguous(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    d: torch.Tensor,
    grouped_layout: torch.Tensor,
    recipe: Optional[Tuple[int, int, int]] = None,
    compiled_dims: str = "nk",
    disable_ue8m0_cast: bool = False,
    use_psum_layout: bool = False,
    expected_m_for_psum_layout: Optional[int] = None,
    *,
    check_grouped_layout: bool = True,
) -> None:
    """``d[r] = (x[r] * sfa[r]) . (w[e] * sfb[e])^T`` for every row r of expert ``e = grouped_layout[r]``.

    - ``a = (x, sfa)``: x float8_e4m3fn ``[M_sum, K]`` row-major (K a multiple of 128);
      sfa float32 ``[M_sum, K / 128]``, per token and 128-wide K block, any strides (copied
      into ``get_mn_major_tma_aligned_tensor``'s layout when not already in it).
    - ``b = (w, sfb)``: w float8_e4m3fn ``[G, N, K]`` contiguous; sfb float32
      ``[G, ceil(N / 128), K / 128]`` contiguous, per 128x128 block.
    - ``d``: bfloat16 ``[M_sum, N]`` contiguous (N a multiple of 8); rows of padding are not
      written.
    - ``grouped_layout``: int32 ``[M_sum]`` on d's device, the expert of each row or -1;
      every expert's rows start at a multiple of ``get_mk_alignment_for_contiguous_layout()``.
    - ``recipe`` None or ``(1, 128, 128)``; ``compiled_dims`` and ``disable_ue8m0_cast`` are
      accepted and ignored (scales are FP32); ``use_psum_layout`` must be False.
    - ``check_grouped_layout``: check grouped_layout's values on the device first (one
      synchronization; pass False under CUDA graph capture). Without the check, a row of an
      expert that does not start its 128-row tile is left unwritten, and an expert outside
      [0, G) is treated as padding.

    Runs on the current stream of d's device; returns without synchronizing.
    """
    if recipe is not None and tuple(recipe) != (1, 128, 128):
        raise ValueError(f"recipe must be None or (1, 128, 128) (the 1D2D recipe), got {recipe}")
    if not isinstance(compiled_dims, str):
        raise TypeError(f"compiled_dims must be a str, got {type(compiled_dims).__name__}")
    if use_psum_layout or expected_m_for_psum_layout is not None:
        raise ValueError("use_psum_layout=True is not supported: no dgemm kernel reads the "
                         "prefix-sum layout yet; pass the per-row grouped_layout")
    if not isinstance(a, (tuple, list)) or len(a) != 2:
        raise TypeError("a must be a pair (x_fp8, sfa)")
    if not isinstance(b, (tuple, list)) or len(b) != 2:
        raise TypeError("b must be a pair (w_fp8, sfb)")
    x = rules.tensor("a[0]", a[0], torch.float8_e4m3fn, 2)
    sfa = rules.tensor("sfa", a[1], torch.float32, 2)
    w = rules.tensor("b[0]", b[0], torch.float8_e4m3fn, 3)
    sfb = rules.tensor("sfb", b[1], torch.float32, 3)
    d = rules.tensor("d", d, torch.bfloat16, 2)
    gl = rules.tensor("grouped_layout", grouped_layout, torch.int32, 1)
    m, k = x.shape
    g, n, kw = w.shape
    if kw != k:
        raise ValueError(f"b[0] must be [G, N, K] with K = {k} (a's K), got {list(w.shape)}")
    if k % 128 != 0:
        raise ValueError(f"K must be a multiple of 128, got {k}")
    if n % 8 != 0:
        raise ValueError(f"N must be a multiple of 8 (16-byte rows of the BF16 d), got {n}")
    if tuple(d.shape) != (m, n):
        raise ValueError(f"d must be [M_sum, N] = {[m, n]}, got {list(d.shape)}")
    if tuple(sfa.shape) != (m, k // 128):
        raise ValueError(f"sfa must be [M_sum, K / 128] = {[m, k // 128]}, got {list(sfa.shape)}")
    want_sfb = (g, (n + 127) // 128, k // 128)
    if tuple(sfb.shape) != want_sfb:
        raise ValueError(f"sfb must be [G, ceil(N / 128), K / 128] = {list(want_sfb)}, "
                         f"got {list(sfb.shape)}")
    if tuple(gl.shape) != (m,):
        raise ValueError(f"grouped_layout must be [M_sum] = [{m}], got {list(gl.shape)}")
    for name, t in (("a[0]", x), ("b[0]", w), ("sfb", sfb), ("d", d), ("grouped_layout", gl)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous")
    if not d.is_cuda:
        raise ValueError(f"d must be a CUDA tensor, got device {d.device}")
    for name, t in (("a[0]", x), ("sfa", sfa), ("b[0]", w), ("sfb", sfb),
                    ("grouped_layout", gl)):
        if t.device != d.device:
            raise ValueError(f"{name} must be on d's device {d.device}, got {t.device}")
    if m == 0:
        return
    if check_grouped_layout:
        _check_layout_values(gl, g)
    sfa = get_mn_major_tma_aligned_tensor(sfa)
    _runtime.load()
    with torch.cuda.device(d.device):
        stream = torch.cuda.current_stream(d.device)
        _runtime.m_grouped_launch(
            x.data_ptr(), sfa.data_ptr(), w.data_ptr(), sfb.data_ptr(), d.data_ptr(),
            gl.data_ptr(), m, n, k, g, stream.cuda_stream)
