"""The normal FP8 GEMM, ``d = a . b^T``.

Drop-in for DeepGEMM's SM90 ``fp8_gemm_nt``:

- the 1D2D recipe ``(1, 128, 128)`` (per-token A scales, 128x128 block B scales) with a
  BF16 d: the 1D2D kernel of kind ``normal`` (one group of M rows);
- the 1D1D recipe ``(1, 1, 128)`` (per-token A and per-channel B scales on every 128-deep
  K block) with an FP32 d, optionally accumulating c: the k-grouped kernel with one group
  of K (``k_grouped_fp8_gemm_nt_contiguous`` with ``ks = [K]``), which needs M and N
  multiples of 4.

``fp8_gemm_nn``, ``fp8_gemm_tn`` and ``fp8_gemm_tt`` are not provided: FP8 WGMMA reads both
operands K-major. Layouts: docs/KernelABI.md ("The 1D2D kernels").
"""

from __future__ import annotations

from typing import Optional, Tuple

import torch

from . import _fp8_1d2d as rules
from . import _runtime
from .m_grouped import get_mn_major_tma_aligned_tensor

_RECIPE_1D1D = (1, 1, 128)


def _check_normal(x, sfa, w, sfb, d, addresses):
    """Every rule of the 1D2D normal GEMM on the op's arguments; returns (M, N, K)."""
    x = rules.tensor("a[0]", x, torch.float8_e4m3fn, 2)
    sfa = rules.tensor("sfa", sfa, torch.float32, 2)
    w = rules.tensor("b[0]", w, torch.float8_e4m3fn, 2)
    sfb = rules.tensor("sfb", sfb, torch.float32, 2)
    d = rules.tensor("d", d, torch.bfloat16, 2)
    m, k = x.shape
    n, kw = w.shape
    if kw != k:
        raise ValueError(f"b[0] must be [N, K] with K = {k} (a[0]'s), got {list(w.shape)}")
    rules.check_extents("M", m, n, k)
    kb = k // rules.BLOCK_K
    rules.check_shapes((("d", d, (m, n), ""), ("sfa", sfa, (m, kb), ""),
                        ("sfb", sfb, ((n + 127) // 128, kb), "")))
    rules.check_contiguous((("a[0]", x), ("b[0]", w), ("sfb", sfb), ("d", d)))
    rules.check_sfa_layout(sfa)
    rules.check_devices((("a[0]", x), ("sfa", sfa), ("b[0]", w), ("sfb", sfb), ("d", d)), d)
    if addresses:
        rules.check_alignment((("a[0]", x, 16), ("sfa", sfa, 16), ("b[0]", w, 16),
                               ("sfb", sfb, 4), ("d", d, 16)))
    return m, n, k


# The 1D2D GEMM as a torch custom op (torch.ops.dgemm.fp8_gemm_nt): it writes d and
# returns nothing.
@torch.library.custom_op("dgemm::fp8_gemm_nt", mutates_args=("d",))
def _normal_op(x: torch.Tensor, sfa: torch.Tensor, w: torch.Tensor, sfb: torch.Tensor,
               d: torch.Tensor) -> None:
    m, n, k = _check_normal(x, sfa, w, sfb, d, addresses=True)
    if m == 0:
        return
    _runtime.load()
    with torch.cuda.device(d.device):
        stream = torch.cuda.current_stream(d.device)
        _runtime.normal_launch(x.data_ptr(), sfa.data_ptr(), w.data_ptr(), sfb.data_ptr(),
                               d.data_ptr(), m, n, k, stream.cuda_stream)


@_normal_op.register_fake
def _normal_fake(x, sfa, w, sfb, d) -> None:
    _check_normal(x, sfa, w, sfb, d, addresses=False)
    return None


def _fp8_gemm_nt_1d1d(x, sfa, w, sfb, d, c) -> None:
    """The 1D1D recipe on the k-grouped kernel: one group whose K is a[0]'s."""
    from .gemm import k_grouped_fp8_gemm_nt_contiguous

    x = rules.tensor("a[0]", x, torch.float8_e4m3fn, 2)
    w = rules.tensor("b[0]", w, torch.float8_e4m3fn, 2)
    d = rules.tensor("d", d, torch.float32, 2)
    m, k = x.shape
    n = w.shape[0]
    if m % 4 != 0 or n % 4 != 0:
        raise ValueError(
            f"recipe (1, 1, 128) needs M and N multiples of 4, got M = {m}, N = {n}: the 1D1D "
            "GEMM runs on the k-grouped kernel, whose FP32 scale rows need 16-byte strides")
    if tuple(d.shape) != (m, n) or not d.is_contiguous():
        raise ValueError(f"d must be a contiguous [M, N] = {[m, n]} tensor, got shape "
                         f"{list(d.shape)}")
    if c is not None and c is not d:
        c = rules.tensor("c", c, torch.float32, 2)
        if tuple(c.shape) != (m, n) or not c.is_contiguous():
            raise ValueError(f"c must be None, d, or a contiguous [M, N] = {[m, n]} tensor, "
                             f"got shape {list(c.shape)}")
    # sfa [M, K/128] and sfb [N, K/128] MN-major: with M, N multiples of 4 the aligned
    # layout is the k-grouped kernel's, strides (1, M) and (1, N).
    sfa = get_mn_major_tma_aligned_tensor(rules.tensor("sfa", sfa, torch.float32, 2))
    sfb = get_mn_major_tma_aligned_tensor(rules.tensor("sfb", sfb, torch.float32, 2))
    d3 = d.view(1, m, n)
    c3 = None if c is None else d3 if c is d else c.view(1, m, n)
    # A fill kernel, not a host copy: capturable into a CUDA graph.
    ks_tensor = torch.full((1,), k, dtype=torch.int32, device=d.device)
    k_grouped_fp8_gemm_nt_contiguous((x, sfa), (w, sfb), d3, [k], ks_tensor, c=c3)


def fp8_gemm_nt(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    d: torch.Tensor,
    c: Optional[torch.Tensor] = None,
    recipe: Optional[Tuple[int, int, int]] = None,
    compiled_dims: str = "nk",
    disable_ue8m0_cast: bool = False,
) -> None:
    """``d = (x * sfa) . (w * sfb)^T`` (``+ c`` for an FP32 d), both operands K-major.

    - BF16 d (recipe None or ``(1, 128, 128)``): ``a = (x, sfa)`` with x float8_e4m3fn
      ``[M, K]`` contiguous (K a multiple of 128) and sfa float32 ``[M, K / 128]`` (any
      strides: copied into ``get_mn_major_tma_aligned_tensor``'s layout when needed);
      ``b = (w, sfb)`` with w float8_e4m3fn ``[N, K]`` contiguous and sfb float32
      ``[ceil(N / 128), K / 128]`` contiguous; d bfloat16 ``[M, N]`` contiguous (N a
      multiple of 8; any M >= 1). ``c`` must be None (DeepGEMM's rule: c is accumulated
      only into an FP32 d).
    - FP32 d (recipe ``(1, 1, 128)``): sfa ``[M, K / 128]`` and sfb ``[N, K / 128]``,
      per row and 128-wide K block; d float32 ``[M, N]``; c None (d is overwritten), d
      itself (accumulate in place) or a float32 ``[M, N]``; M and N multiples of 4. Runs
      ``k_grouped_fp8_gemm_nt_contiguous`` with one group of K.
    - ``compiled_dims`` and ``disable_ue8m0_cast`` are accepted and ignored.

    Runs on the current stream of d's device; returns without synchronizing. The BF16
    form is a thin wrapper over the custom op ``torch.ops.dgemm.fp8_gemm_nt``.
    """
    rules.check_flags(compiled_dims, disable_ue8m0_cast)
    x, sfa = rules.split_pair("a", a)
    w, sfb = rules.split_pair("b", b)
    if not isinstance(d, torch.Tensor):
        raise TypeError(f"d must be a torch.Tensor, got {type(d).__name__}")
    if d.dtype == torch.float32:
        if recipe is None or tuple(recipe) != _RECIPE_1D1D:
            raise ValueError(f"an FP32 d needs recipe=(1, 1, 128) (the 1D1D GEMM), got {recipe}; "
                             "the 1D2D recipe writes a BF16 d")
        _fp8_gemm_nt_1d1d(x, sfa, w, sfb, d, c)
        return
    if d.dtype != torch.bfloat16:
        raise TypeError(f"d must be torch.bfloat16 (1D2D) or torch.float32 (1D1D), got {d.dtype}")
    if c is not None:
        raise ValueError("c must be None for a BF16 d: DeepGEMM accumulates c only into an "
                         "FP32 d (recipe (1, 1, 128))")
    rules.check_recipe(recipe)
    sfa = get_mn_major_tma_aligned_tensor(rules.tensor("sfa", sfa, torch.float32, 2))
    torch.ops.dgemm.fp8_gemm_nt(x, sfa, w, sfb, d)


def fp8_gemm_nt_reference(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    recipe: Optional[Tuple[int, int, int]] = None,
) -> torch.Tensor:
    """FP32 ``[M, N]`` reference of the dequantized operands: sfb per 128x128 block (recipe
    None or ``(1, 128, 128)``) or per row and 128-wide K block (``(1, 1, 128)``)."""
    x, sfa = a
    w, sfb = b
    xa = rules.dequantized_rows(x, sfa)
    if recipe is not None and tuple(recipe) == _RECIPE_1D1D:
        return xa @ rules.dequantized_rows(w, sfb).t()
    return xa @ rules.dequantized_blocks(w, sfb).t()
