"""The torch entry point: a drop-in for DeepGEMM's SM90 ``k_grouped_fp8_gemm_nt_contiguous``."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import torch

from . import _checks, _runtime

_MISSING = object()


def _describe(name: str, t: Any, addresses: bool = True) -> _checks.TensorInfo:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    # Only a CUDA tensor's address is read: meta and fake tensors have none, and
    # no rule needs a CPU tensor's.
    ptr = t.data_ptr() if addresses and t.is_cuda else 0
    return _checks.TensorInfo(
        name=name,
        dtype=str(t.dtype).replace("torch.", ""),
        device=str(t.device),
        shape=tuple(t.shape),
        strides=tuple(t.stride()),
        data_ptr=ptr,
        element_size=t.element_size(),
        contiguous=t.is_contiguous(),
    )


def _check_op_args(a_fp8, sfa, b_fp8, sfb, d, ks, ks_tensor, c, addresses):
    infos = dict(
        a=_describe("a", a_fp8, addresses), sfa=_describe("sfa", sfa, addresses),
        b=_describe("b", b_fp8, addresses), sfb=_describe("sfb", sfb, addresses),
        d=_describe("d", d, addresses), c=None if c is None else _describe("c", c, addresses),
        ks_tensor=_describe("ks_tensor", ks_tensor, addresses),
    )
    return _checks.check_k_grouped(ks=ks, addresses=addresses, **infos)


# The GEMM as a torch custom op (torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous), so that
# torch.compile, FakeTensor and meta tensors see an op that writes d and returns nothing.
# c aliasing d is not passed to the op (torch refuses aliased inputs of a mutating op):
# `accumulate` says what c=None means, d += product (c was d) or d = product (c was None).
@torch.library.custom_op("dgemm::k_grouped_fp8_gemm_nt_contiguous", mutates_args=("d",))
def _k_grouped_op(a_fp8: torch.Tensor, sfa: torch.Tensor, b_fp8: torch.Tensor,
                  sfb: torch.Tensor, d: torch.Tensor, ks: List[int], ks_tensor: torch.Tensor,
                  c: Optional[torch.Tensor], accumulate: bool) -> None:
    problem = _check_op_args(a_fp8, sfa, b_fp8, sfb, d, ks, ks_tensor, c, addresses=True)
    _runtime.load()
    with torch.cuda.device(d.device):
        stream = torch.cuda.current_stream(d.device)
        if c is None:
            if not accumulate:
                d.zero_()
            c = d
        if problem.total_k == 0:
            # Every group is empty: d = c. The kernel is not launched, since the
            # FP8 operands have no storage to point at.
            if c.data_ptr() != d.data_ptr():
                d.copy_(c)
            return
        ws_bytes = _runtime.workspace_bytes(problem.m, problem.n, problem.ks)
        # Allocated through torch on this stream: stream-ordered reuse, and the
        # graph's private pool under capture. The caching allocator's blocks
        # are 512-byte aligned, beyond the 128 bytes the kernel needs.
        workspace = torch.empty(ws_bytes, dtype=torch.uint8, device=d.device) if ws_bytes else None
        _runtime.launch(
            a_fp8.data_ptr(), sfa.data_ptr(), b_fp8.data_ptr(), sfb.data_ptr(),
            d.data_ptr(), c.data_ptr(), problem.m, problem.n, problem.ks,
            ks_tensor.data_ptr(), 0 if workspace is None else workspace.data_ptr(), ws_bytes,
            stream.cuda_stream)


@_k_grouped_op.register_fake
def _k_grouped_fake(a_fp8, sfa, b_fp8, sfb, d, ks, ks_tensor, c, accumulate) -> None:
    # Every rule but the pointer ones, so a traced call fails as an eager one would.
    _check_op_args(a_fp8, sfa, b_fp8, sfb, d, ks, ks_tensor, c, addresses=False)
    return None


def _split_operand(name: str, sf_name: str, x: Any) -> Tuple[Any, Any]:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise TypeError(
            f"{name} must be a pair ({name}_fp8, {sf_name}) of tensors, got {type(x).__name__}"
        )
    return x[0], x[1]


def _resolve_alias(name: str, value: Any, alias: str, alias_value: Any, missing: Any) -> Any:
    if value is not missing and alias_value is not missing:
        raise TypeError(f"pass {name} or its DeepGEMM spelling {alias}, not both")
    return alias_value if value is missing else value


def _host_ks(ks: Any) -> Any:
    if isinstance(ks, torch.Tensor):
        if ks.device.type != "cpu":
            raise TypeError(
                "ks must be on the host (a list of ints); the device copy goes in ks_tensor"
            )
        return ks.tolist()
    return ks


def k_grouped_fp8_gemm_nt_contiguous(
    a: Tuple[torch.Tensor, torch.Tensor],
    b: Tuple[torch.Tensor, torch.Tensor],
    d: torch.Tensor,
    ks: Sequence[int] = _MISSING,  # type: ignore[assignment]
    ks_tensor: Optional[torch.Tensor] = _MISSING,  # type: ignore[assignment]
    c: Optional[torch.Tensor] = None,
    recipe: Tuple[int, int, int] = (1, 1, 128),
    compiled_dims: str = "mn",
    use_psum_layout: bool = False,
    *,
    ks_cpu: Sequence[int] = _MISSING,  # type: ignore[assignment]
    grouped_layout: Optional[torch.Tensor] = _MISSING,  # type: ignore[assignment]
    check_ks_tensor: bool = False,
) -> None:
    """``d[g] = c[g] + sum_kb (A_g,kb . B_g,kb^T) * sfa[:, kb] (x) sfb[:, kb]`` for each group g.

    Arguments (DeepGEMM's positions; layouts in docs/KernelABI.md):

    - ``a = (a_fp8, sfa)``: ``a_fp8`` float8_e4m3fn, contiguous, ``M * sum(ks)``
      elements, group g's ``M x K_g`` block K-major at element ``M * (K_0 + ... + K_{g-1})``;
      ``sfa`` float32 of shape ``(M, sum(ks) / 128)`` and strides ``(1, M)``.
    - ``b = (b_fp8, sfb)``: likewise with N.
    - ``d``: float32 contiguous ``[G, M, N]``, written.
    - ``ks`` (DeepGEMM: ``ks_cpu``): host list of the G group sizes K_g, each a
      multiple of 128 (0 allowed).
    - ``ks_tensor`` (DeepGEMM: ``grouped_layout``): int32 ``[G]`` on d's device
      holding the same values. Required.
    - ``c``: float32 ``[G, M, N]`` added to the product; may be ``d`` itself. ``None``
      means no accumulation: d is zeroed on the current stream first.
    - ``recipe`` must be ``(1, 1, 128)``; ``compiled_dims`` is accepted and ignored;
      ``use_psum_layout`` must be False.
    - ``check_ks_tensor``: also check that ks_tensor's values equal ks. This copies
      ks_tensor to the host, which synchronizes (and so cannot be captured).

    Runs on the current stream of d's device and returns without synchronizing.
    Raises TypeError/ValueError for bad arguments before touching the device,
    RuntimeError if the runtime library is missing or the launch fails.

    A thin wrapper over the custom op ``torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous``
    (mutates d; a fake implementation with the same rules but the pointer ones), so it runs
    under ``torch.compile(fullgraph=True)``, FakeTensor and meta tensors (docs/Python.md).
    """
    ks = _resolve_alias("ks", ks, "ks_cpu", ks_cpu, _MISSING)
    if ks is _MISSING or ks is None:
        raise TypeError("ks (DeepGEMM: ks_cpu) is required: the host list of the G group sizes")
    ks_tensor = _resolve_alias("ks_tensor", ks_tensor, "grouped_layout", grouped_layout, _MISSING)
    if ks_tensor is _MISSING or ks_tensor is None:
        raise TypeError(
            "ks_tensor (DeepGEMM: grouped_layout) is required: an int32 tensor of the G group "
            "sizes on d's device"
        )
    if not isinstance(check_ks_tensor, bool):
        raise TypeError(f"check_ks_tensor must be a bool, got {type(check_ks_tensor).__name__}")

    a_fp8, sfa = _split_operand("a", "sfa", a)
    b_fp8, sfb = _split_operand("b", "sfb", b)
    for name, t in (("a", a_fp8), ("sfa", sfa), ("b", b_fp8), ("sfb", sfb), ("d", d),
                    ("ks_tensor", ks_tensor)) + ((("c", c),) if c is not None else ()):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    _checks.check_recipe(recipe)
    _checks.check_use_psum_layout(use_psum_layout)
    _checks.check_compiled_dims(compiled_dims)
    ks = list(_checks.normalize_ks(_host_ks(ks)))
    if check_ks_tensor:
        # The op's checks first (shapes, devices), then the values.
        _check_op_args(a_fp8, sfa, b_fp8, sfb, d, ks, ks_tensor,
                       None if c is None or c is d else c, addresses=True)
        actual = ks_tensor.tolist()
        if actual != ks:
            raise ValueError(f"ks_tensor holds {actual} but ks is {ks}")
    # c=d accumulates in place; c=None overwrites; another c is read. Eagerly, a c that is
    # another view of exactly d's elements counts as d (as the runtime sees it).
    accumulate = c is d
    if (not accumulate and c is not None and not torch.compiler.is_compiling()
            and type(c) is torch.Tensor and type(d) is torch.Tensor  # not fake: no address
            and c.is_cuda and d.is_cuda and c.data_ptr() == d.data_ptr()
            and c.shape == d.shape and c.stride() == d.stride() and c.dtype == d.dtype):
        accumulate = True
    torch.ops.dgemm.k_grouped_fp8_gemm_nt_contiguous(
        a_fp8, sfa, b_fp8, sfb, d, ks, ks_tensor, None if c is None or accumulate else c,
        accumulate)
