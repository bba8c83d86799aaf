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


def _check_psum_values(psum: torch.Tensor, m: int) -> None:
    """One device reduction and one synchronization: psum ascending, within [0, M_sum]."""
    prev = torch.cat([psum.new_zeros(1), psum[:-1]])
    flags = torch.stack([((psum < 0) | (psum > m)).any(), (psum < prev).any()]).tolist()
    if flags[0]:
        raise ValueError(f"grouped_layout (use_psum_layout=True) must hold prefix sums of rows "
                         f"in [0, M_sum = {m}]")
    if flags[1]:
        raise ValueError("grouped_layout (use_psum_layout=True) must be ascending: prefix sums "
                         "of the experts' rows")


def _check_contiguous(x, sfa, w, sfb, d, gl, use_psum_layout, addresses):
    """Every rule of the contiguous GEMM on the op's arguments; returns (G, M_sum, N, K)."""
    x = rules.tensor("a[0]", x, torch.float8_e4m3fn, 2)
    sfa = rules.tensor("sfa", sfa, torch.float32, 2)
    w = rules.tensor("b[0]", w, torch.float8_e4m3fn, 3)
    sfb = rules.tensor("sfb", sfb, torch.float32, 3)
    d = rules.tensor("d", d, torch.bfloat16, 2)
    gl = rules.tensor("grouped_layout", gl, torch.int32, 1)
    m, k = x.shape
    g, n, kw = w.shape
    if kw != k:
        raise ValueError(f"b[0] must be [G, N, K] with K = {k} (a's K), got {list(w.shape)}")
    if g < 1:
        raise ValueError(f"num_groups G = b[0].shape[0] must be >= 1, got {g}")
    rules.check_extents("M_sum", m, n, k)
    kb = k // rules.BLOCK_K
    gl_shape = (((g,), " ([G] prefix sums with use_psum_layout=True)") if use_psum_layout
                else ((m,), " ([M_sum], one expert per row)"))
    rules.check_shapes((("d", d, (m, n), ""), ("sfa", sfa, (m, kb), ""),
                        ("sfb", sfb, (g, (n + 127) // 128, kb), ""),
                        ("grouped_layout", gl, *gl_shape)))
    rules.check_contiguous((("a[0]", x), ("b[0]", w), ("sfb", sfb), ("d", d),
                            ("grouped_layout", gl)))
    rules.check_sfa_layout(sfa)
    rules.check_devices((("a[0]", x), ("sfa", sfa), ("b[0]", w), ("sfb", sfb), ("d", d),
                         ("grouped_layout", gl)), d)
    if addresses:
        rules.check_alignment((("a[0]", x, 16), ("sfa", sfa, 16), ("b[0]", w, 16),
                               ("sfb", sfb, 4), ("d", d, 16), ("grouped_layout", gl, 4)))
    return g, m, n, k


# The GEMM as a torch custom op (torch.ops.dgemm.m_grouped_fp8_gemm_nt_contiguous), both
# layouts: it writes d and returns nothing, so torch.compile, FakeTensor and meta tensors
# see it as such. expected_m 0: no hint.
@torch.library.custom_op("dgemm::m_grouped_fp8_gemm_nt_contiguous", mutates_args=("d",))
def _contiguous_op(x: torch.Tensor, sfa: torch.Tensor, w: torch.Tensor, sfb: torch.Tensor,
                   d: torch.Tensor, grouped_layout: torch.Tensor, use_psum_layout: bool,
                   expected_m: int) -> None:
    g, m, n, k = _check_contiguous(x, sfa, w, sfb, d, grouped_layout, use_psum_layout,
                                   addresses=True)
    if m == 0:
        return
    _runtime.load()
    with torch.cuda.device(d.device):
        stream = torch.cuda.current_stream(d.device)
        ptrs = (x.data_ptr(), sfa.data_ptr(), w.data_ptr(), sfb.data_ptr(), d.data_ptr(),
                grouped_layout.data_ptr())
        if use_psum_layout:
            _runtime.psum_launch(*ptrs, m, n, k, g, expected_m, stream.cuda_stream)
        else:
            _runtime.m_grouped_launch(*ptrs, m, n, k, g, stream.cuda_stream)


@_contiguous_op.register_fake
def _contiguous_fake(x, sfa, w, sfb, d, grouped_layout, use_psum_layout, expected_m) -> None:
    # Every rule but the pointer ones, so a traced call fails as an eager one would.
    _check_contiguous(x, sfa, w, sfb, d, grouped_layout, use_psum_layout, addresses=False)
    return None


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
    """``d[r] = (x[r] * sfa[r]) . (w[e] * sfb[e])^T`` for every row r of an expert ``e``.

    - ``a = (x, sfa)``: x float8_e4m3fn ``[M_sum, K]`` row-major (K a multiple of 128);
      sfa float32 ``[M_sum, K / 128]``, per token and 128-wide K block, any strides (copied
      into ``get_mn_major_tma_aligned_tensor``'s layout when not already in it).
    - ``b = (w, sfb)``: w float8_e4m3fn ``[G, N, K]`` contiguous; sfb float32
      ``[G, ceil(N / 128), K / 128]`` contiguous, per 128x128 block.
    - ``d``: bfloat16 ``[M_sum, N]`` contiguous (N a multiple of 8); rows of no expert
      (padding, gaps) are not written.
    - ``grouped_layout``: int32 on d's device. Without ``use_psum_layout``: ``[M_sum]``, the
      expert of each row or -1 (padding); every expert's rows start at a multiple of
      ``get_mk_alignment_for_contiguous_layout()``. With ``use_psum_layout=True``: ``[G]``,
      prefix sums of the experts' rows (DeepGEMM's psum layout): expert e's rows are
      ``[align(psum[e - 1], 128), psum[e])``, expert 0's from row 0; the rows from
      ``psum[e]`` to the next multiple of 128 are gaps, neither computed nor written. The
      kernel reads it on the device (the host does not, unless ``check_grouped_layout``).
    - ``expected_m_for_psum_layout``: with the psum layout only, None or the expected rows
      per expert (a positive int), which the kernel choice plans for.
    - ``recipe`` None or ``(1, 128, 128)``; ``compiled_dims`` and ``disable_ue8m0_cast`` are
      accepted and ignored (scales are FP32).
    - ``check_grouped_layout``: check grouped_layout's values on the device first (one
      synchronization; pass False under CUDA graph capture or torch.compile). Without the
      check, a row of an expert that does not start its 128-row tile is left unwritten and
      an expert outside [0, G) is treated as padding; a psum value is clamped into
      [0, M_sum] (never an out-of-bounds access).

    Runs on the current stream of d's device; returns without synchronizing. A thin wrapper
    over the custom op ``torch.ops.dgemm.m_grouped_fp8_gemm_nt_contiguous`` (mutates d; its
    fake implementation checks every rule but the pointer ones).
    """
    rules.check_recipe(recipe)
    rules.check_flags(compiled_dims, disable_ue8m0_cast)
    expected_m = psum_hint(use_psum_layout, expected_m_for_psum_layout)
    x, sfa = rules.split_pair("a", a)
    w, sfb = rules.split_pair("b", b)
    sfa = get_mn_major_tma_aligned_tensor(rules.tensor("sfa", sfa, torch.float32, 2))
    if check_grouped_layout:
        g, m, _, _ = _check_contiguous(x, sfa, w, sfb, d, grouped_layout, use_psum_layout,
                                       addresses=False)
        if m and use_psum_layout:
            _check_psum_values(grouped_layout, m)
        elif m:
            _check_layout_values(grouped_layout, g)
    torch.ops.dgemm.m_grouped_fp8_gemm_nt_contiguous(x, sfa, w, sfb, d, grouped_layout,
                                                     use_psum_layout, expected_m)


def psum_hint(use_psum_layout: Any, expected_m_for_psum_layout: Any) -> int:
    """The op's expected_m: 0 (no hint), or ``expected_m_for_psum_layout``, a positive int
    that only the prefix-sum layout takes; ``use_psum_layout`` must be a bool."""
    if not isinstance(use_psum_layout, bool):
        raise TypeError(f"use_psum_layout must be a bool, got {type(use_psum_layout).__name__}")
    if expected_m_for_psum_layout is None:
        return 0
    if not use_psum_layout:
        raise ValueError("expected_m_for_psum_layout needs use_psum_layout=True")
    return rules.int_at_least("expected_m_for_psum_layout", expected_m_for_psum_layout, 1)


def psum_to_grouped_layout(psum: torch.Tensor, m_sum: int) -> torch.Tensor:
    """The per-row grouped layout ``[M_sum]`` (expert or -1) that the prefix sums ``psum``
    (``[G]``, use_psum_layout's) describe: expert e's rows ``[align(psum[e - 1], 128),
    psum[e])``, -1 elsewhere. For references and tests."""
    ends = psum.long().tolist()
    layout = torch.full((m_sum,), -1, dtype=torch.int32, device=psum.device)
    start = 0
    for e, end in enumerate(ends):
        if end > start:
            layout[start:end] = e
        start = (end + _ALIGNMENT - 1) // _ALIGNMENT * _ALIGNMENT
    return layout
