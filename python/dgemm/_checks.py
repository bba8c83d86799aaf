"""Argument rules of ``k_grouped_fp8_gemm_nt_contiguous``, free of torch.

The rules work on :class:`TensorInfo` records rather than on tensors, so they
can be tested without torch or a GPU, and so that nothing in them can touch a
device: every rule runs, and raises, before the runtime library is loaded or a
kernel is launched. ``gemm.py`` builds the records from torch tensors.

Wrong types and dtypes raise ``TypeError``; wrong values, shapes, strides,
devices and alignments raise ``ValueError``. Every message names the argument
and states the rule. The layouts are the ones of docs/KernelABI.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

# K granularity of the scales and of the groups: one scale per channel per 128
# tokens, and every group a whole number of such blocks.
BLOCK_K = 128
# Every pointer the kernel's tensor maps or vector loads see must be 16-byte
# aligned (TMA global addresses and strides).
POINTER_ALIGNMENT = 16
# M and N are the row strides (in floats) of the scale tensor maps, which TMA
# requires to be multiples of 16 bytes.
MN_MULTIPLE = 4
SUPPORTED_RECIPE = (1, 1, 128)
# The kernel takes M, N and G as 32-bit parameters; every K_g and their sum
# must fit the runtime's int32 too (a larger value would wrap in ctypes).
_MAX_DIM = 2**31 - 1
_MAX_INT32 = 2**31 - 1


@dataclass(frozen=True)
class TensorInfo:
    """What the rules need to know about one tensor argument.

    ``dtype`` is the torch dtype's name without the ``torch.`` prefix
    (``"float8_e4m3fn"``), ``device`` the torch device string (``"cuda:0"``,
    ``"cpu"``, ``"meta"``), ``strides`` in elements and ``data_ptr`` the address
    of the first element (0 where the tensor has no device memory).
    """

    name: str
    dtype: str
    device: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    data_ptr: int
    element_size: int
    contiguous: bool

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.element_size

    @property
    def is_cuda(self) -> bool:
        return self.device.startswith("cuda")


@dataclass(frozen=True)
class KGroupedProblem:
    """The sizes of one k-grouped GEMM, as validated."""

    m: int
    n: int
    num_groups: int
    ks: Tuple[int, ...]

    @property
    def total_k(self) -> int:
        return sum(self.ks)

    @property
    def num_k_blocks(self) -> int:
        return self.total_k // BLOCK_K


def _fmt_dtype(dtype: str) -> str:
    return f"torch.{dtype}"


def _is_int(value: Any) -> bool:
    # bool is an int subclass but never a meaningful count here.
    if isinstance(value, bool):
        return False
    # An int needs no __index__ call: under torch.compile a traced int (a SymInt once a
    # recompilation made it dynamic) passes this test, and calling __index__ on it would
    # break the graph (fullgraph=True fails; seen with torch 2.11).
    if isinstance(value, int) or type(value).__name__ == "SymInt":
        return True
    try:
        value.__index__()
    except (AttributeError, TypeError):
        return False
    return True


def normalize_ks(ks: Any, name: str = "ks", multiple: int = BLOCK_K) -> Tuple[int, ...]:
    """Returns ``ks`` as a tuple of ints, checking each is >= 0, a multiple of ``multiple``
    (128: the FP8 scales' K block; the BF16 kernel's is 64) and at most 2**31 - 1, and that
    their sum is at most 2**31 - 1 (the runtime's int32)."""
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence):
        raise TypeError(
            f"{name} must be a host list or tuple of ints (the G group sizes K_g), "
            f"got {type(ks).__name__}"
        )
    out = []
    for i, k in enumerate(ks):
        if not _is_int(k):
            raise TypeError(f"{name}[{i}] must be an int, got {type(k).__name__} {k!r}")
        if not isinstance(k, int) and type(k).__name__ != "SymInt":
            k = k.__index__()  # numpy integers and other __index__ types
        if k < 0:
            raise ValueError(f"{name}[{i}] = {k} is negative: every group size K_g must be >= 0")
        if k % multiple != 0:
            raise ValueError(
                f"{name}[{i}] = {k} is not a multiple of {multiple}: every group size K_g must "
                f"be a multiple of {multiple} (0 is allowed)"
            )
        if k > _MAX_INT32:
            raise ValueError(
                f"{name}[{i}] = {k} does not fit in int32: every group size K_g must be at most "
                f"{_MAX_INT32}"
            )
        out.append(k)
    if sum(out) > _MAX_INT32:
        raise ValueError(
            f"sum({name}) = {sum(out)} does not fit in int32: the total K must be at most "
            f"{_MAX_INT32}"
        )
    return tuple(out)


def check_recipe(recipe: Any) -> None:
    if isinstance(recipe, (str, bytes)) or not isinstance(recipe, Sequence):
        raise TypeError(f"recipe must be a tuple of 3 ints, got {type(recipe).__name__}")
    if len(recipe) != 3 or not all(_is_int(r) for r in recipe):
        raise TypeError(f"recipe must be a tuple of 3 ints, got {tuple(recipe)!r}")
    if tuple(r.__index__() for r in recipe) != SUPPORTED_RECIPE:
        raise ValueError(
            f"recipe={tuple(recipe)!r} is not supported: only recipe={SUPPORTED_RECIPE!r} "
            "(one FP32 scale per channel per 128 tokens, for both operands) is"
        )


def check_use_psum_layout(use_psum_layout: Any) -> None:
    if not isinstance(use_psum_layout, bool):
        raise TypeError(
            f"use_psum_layout must be a bool, got {type(use_psum_layout).__name__}"
        )
    if use_psum_layout:
        raise ValueError(
            "use_psum_layout=True is not supported: ks_tensor must hold the group sizes "
            "K_g, not their prefix sums (use_psum_layout=False)"
        )


def check_compiled_dims(compiled_dims: Any) -> None:
    # DeepGEMM's JIT specialization hint; it never changes the result, and our
    # kernels are compiled ahead of time, so it is accepted and ignored.
    if not isinstance(compiled_dims, str):
        raise TypeError(f"compiled_dims must be a str, got {type(compiled_dims).__name__}")
    if not set(compiled_dims) <= set("mnk"):
        raise ValueError(
            f"compiled_dims={compiled_dims!r} may only contain the letters 'm', 'n' and 'k'"
        )


def _check_dtype(t: TensorInfo, dtype: str) -> None:
    if t.dtype != dtype:
        raise TypeError(
            f"{t.name} must be a {_fmt_dtype(dtype)} tensor, got {_fmt_dtype(t.dtype)}"
        )


def check_operand(
    data: TensorInfo,
    sf: TensorInfo,
    rows: int,
    rows_name: str,
    total_k: int,
    check_layout: bool = True,
) -> None:
    """Checks one packed FP8 operand and its scales (a/sfa with M, or b/sfb with N).

    ``check_layout`` False skips the contiguity and stride rules (the reference
    implementation reads any layout).
    """
    _check_dtype(data, "float8_e4m3fn")
    _check_dtype(sf, "float32")
    want = rows * total_k
    if data.numel != want:
        raise ValueError(
            f"{data.name} must hold {rows_name} * sum(ks) = {rows} * {total_k} = {want} FP8 "
            f"elements (each group's {rows_name} x K_g block, K-major), got {data.numel} "
            f"(shape {data.shape})"
        )
    if check_layout and not data.contiguous:
        raise ValueError(f"{data.name} must be contiguous (K-major packed groups)")
    kb = total_k // BLOCK_K
    if sf.shape != (rows, kb):
        raise ValueError(
            f"{sf.name} must have shape ({rows_name}, sum(ks)/{BLOCK_K}) = ({rows}, {kb}), "
            f"got {sf.shape}"
        )
    if check_layout and sf.numel > 0:
        # A size-1 dimension's stride never addresses anything: ignore it, as
        # torch's own contiguity rule does.
        ok = sf.strides[0] == 1 and (kb == 1 or sf.strides[1] == rows)
        if not ok:
            raise ValueError(
                f"{sf.name} must have strides (1, {rows_name}) = (1, {rows}): the transpose of "
                f"a contiguous ({kb}, {rows}) tensor (e.g. sf.T), got strides {sf.strides}"
            )


def _check_output(t: TensorInfo, shape: Tuple[int, int, int]) -> None:
    _check_dtype(t, "float32")
    if t.shape != shape:
        raise ValueError(
            f"{t.name} must have shape [G, M, N] = {list(shape)} like d, got {list(t.shape)}"
        )
    if not t.contiguous:
        raise ValueError(f"{t.name} must be contiguous (row-major [G, M, N])")


def check_k_grouped(
    a: TensorInfo,
    sfa: TensorInfo,
    b: TensorInfo,
    sfb: TensorInfo,
    d: TensorInfo,
    c: Optional[TensorInfo],
    ks_tensor: TensorInfo,
    ks: Any,
    recipe: Any = SUPPORTED_RECIPE,
    use_psum_layout: Any = False,
    compiled_dims: Any = "mn",
    addresses: bool = True,
) -> KGroupedProblem:
    """Checks every argument of the k-grouped GEMM; returns the problem sizes.

    Order: types and dtypes, then values and shapes, then devices, then
    pointer alignment and aliasing, so that a CPU or meta tensor with a wrong
    shape reports the shape, and one with every shape right reports its device.
    ``addresses=False`` leaves out the pointer rules (alignment and overlap): for fake and
    meta tensors, which have no addresses (the custom op's fake implementation).
    """
    check_recipe(recipe)
    check_use_psum_layout(use_psum_layout)
    check_compiled_dims(compiled_dims)
    ks = normalize_ks(ks)
    for t, dtype in ((a, "float8_e4m3fn"), (b, "float8_e4m3fn"), (sfa, "float32"),
                     (sfb, "float32"), (d, "float32"), (ks_tensor, "int32")):
        _check_dtype(t, dtype)
    if c is not None:
        _check_dtype(c, "float32")

    if len(d.shape) != 3:
        raise ValueError(f"d must have shape [G, M, N] (3 dimensions), got shape {list(d.shape)}")
    g, m, n = d.shape
    if g < 1:
        raise ValueError(f"num_groups G = d.shape[0] = {g} must be >= 1")
    for name, value in (("M = d.shape[1]", m), ("N = d.shape[2]", n)):
        if value < 1 or value % MN_MULTIPLE != 0:
            raise ValueError(
                f"{name} = {value} must be a positive multiple of {MN_MULTIPLE} (the scale "
                "tensors' rows must be 16-byte aligned for TMA)"
            )
    for name, value in (("G", g), ("M", m), ("N", n)):
        if value > _MAX_DIM:
            raise ValueError(f"{name} = {value} exceeds the kernel's limit of {_MAX_DIM}")
    if not d.contiguous:
        raise ValueError("d must be contiguous (row-major [G, M, N])")
    if c is not None:
        _check_output(c, (g, m, n))

    if len(ks) != g:
        raise ValueError(
            f"len(ks) = {len(ks)} does not match num_groups G = d.shape[0] = {g}"
        )
    if ks_tensor.shape != (g,):
        raise ValueError(
            f"ks_tensor must have shape [G] = [{g}] (one int32 K_g per group), "
            f"got {list(ks_tensor.shape)}"
        )
    if not ks_tensor.contiguous:
        raise ValueError("ks_tensor must be contiguous")

    total_k = sum(ks)
    check_operand(a, sfa, m, "M", total_k)
    check_operand(b, sfb, n, "N", total_k)

    tensors = [a, sfa, b, sfb, d] + ([c] if c is not None else []) + [ks_tensor]
    for t in tensors:
        if not t.is_cuda:
            raise ValueError(f"{t.name} must be a CUDA tensor, got device {t.device!r}")
    for t in tensors:
        if t.device != d.device:
            raise ValueError(
                f"{t.name} is on {t.device} but d is on {d.device}: all tensors must be on "
                "one CUDA device"
            )

    if not addresses:
        return KGroupedProblem(m=m, n=n, num_groups=g, ks=ks)
    for t in tensors:
        # An empty tensor has no address the kernel reads (all groups empty).
        if t.numel > 0 and t.data_ptr % POINTER_ALIGNMENT != 0:
            raise ValueError(
                f"{t.name}'s data pointer {t.data_ptr:#x} is not {POINTER_ALIGNMENT}-byte "
                "aligned (a view with a storage offset can cause this)"
            )
    if c is not None and c.data_ptr != d.data_ptr:
        if c.data_ptr < d.data_ptr + d.nbytes and d.data_ptr < c.data_ptr + c.nbytes:
            raise ValueError("c must either be d itself (accumulate in place) or not overlap d")
    # d is written while the others are read: any overlap is a race in the
    # kernel (the inputs may share memory with each other).
    for t in (a, sfa, b, sfb, ks_tensor):
        if t.nbytes > 0 and t.data_ptr < d.data_ptr + d.nbytes and d.data_ptr < t.data_ptr + t.nbytes:
            raise ValueError(
                f"d must not overlap {t.name}: the kernel writes d while it reads {t.name} "
                f"(d at {d.data_ptr:#x} with {d.nbytes} bytes, {t.name} at {t.data_ptr:#x} with "
                f"{t.nbytes} bytes)"
            )

    return KGroupedProblem(m=m, n=n, num_groups=g, ks=ks)
