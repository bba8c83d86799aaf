"""dgemm: a drop-in for DeepGEMM's SM90 ``k_grouped_fp8_gemm_nt_contiguous``,
``m_grouped_fp8_gemm_nt_contiguous``, ``m_grouped_fp8_gemm_nt_masked`` and ``fp8_gemm_nt``, and
its BF16 GEMMs (``bf16_gemm_{nt,nn,tn,tt}``, ``m_grouped_bf16_gemm_{nt,nn}_contiguous``,
``m_grouped_bf16_gemm_nt_masked``, ``k_grouped_bf16_gemm_tn_contiguous``).

The GEMM runs in the dgemm runtime library (``libdgemm_runtime.so``), loaded
through ctypes at the first call; see docs/Python.md for how it is found.
Importing this package needs neither a GPU, nor the library, nor torch: the
torch-facing names below are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._runtime import allow_unsafe_kernels, check_kernel_bundle, kernel_info, set_kernel_dir
from ._runtime import version as runtime_version

__version__ = "0.1.0"

_LAZY = {
    "k_grouped_fp8_gemm_nt_contiguous": "gemm",
    "per_channel_cast_to_fp8": "layout",
    "pack_k_grouped_kmajor": "layout",
    "make_k_grouped_operand": "layout",
    "k_grouped_reference": "layout",
    "calc_diff": "testing",
    "m_grouped_fp8_gemm_nt_contiguous": "m_grouped",
    "get_mk_alignment_for_contiguous_layout": "m_grouped",
    "get_tma_aligned_size": "m_grouped",
    "get_mn_major_tma_aligned_tensor": "m_grouped",
    "transform_sf_into_required_layout": "m_grouped",
    "per_token_cast_to_fp8": "m_grouped",
    "per_block_cast_to_fp8": "m_grouped",
    "m_grouped_reference": "m_grouped",
    "psum_to_grouped_layout": "m_grouped",
    "m_grouped_fp8_gemm_nt_masked": "masked",
    "m_grouped_masked_reference": "masked",
    "fp8_gemm_nt": "normal",
    "fp8_gemm_nt_reference": "normal",
    "bf16_gemm_nt": "bf16",
    "bf16_gemm_nn": "bf16",
    "bf16_gemm_tn": "bf16",
    "bf16_gemm_tt": "bf16",
    "m_grouped_bf16_gemm_nt_contiguous": "bf16_m_grouped",
    "m_grouped_bf16_gemm_nn_contiguous": "bf16_m_grouped",
    "m_grouped_bf16_gemm_nt_masked": "bf16_m_grouped",
    "k_grouped_bf16_gemm_tn_contiguous": "bf16_k_grouped",
    "bf16_gemm_reference": "testing",
    "m_grouped_bf16_reference": "testing",
    "m_grouped_bf16_masked_reference": "testing",
    "k_grouped_bf16_reference": "testing",
}

__all__ = sorted([*_LAZY, "allow_unsafe_kernels", "check_kernel_bundle", "kernel_info",
                  "runtime_version", "set_kernel_dir"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
