"""ctypes binding of the dgemm runtime library (runtime/include/dgemm/Runtime/dgemm_runtime.h).

Free of torch: it passes plain integers (device pointers, sizes, a stream
handle). The library is located and loaded at the first call that needs it,
never at import, so ``import dgemm`` works on a machine with neither a GPU nor
the library.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import List, Optional, Sequence

LIBRARY_NAME = "libdgemm_runtime.so"
ENV_LIBRARY = "DGEMM_RUNTIME_LIB"
ENV_KERNEL_DIR = "DGEMM_KERNEL_DIR"

_PACKAGE_DIR = Path(__file__).resolve().parent
# python/dgemm/_runtime.py -> the repository root, for an uninstalled checkout.
_REPO_ROOT = _PACKAGE_DIR.parent.parent
# The bundle an installed wheel carries (python/CMakeLists.txt), and the one a
# build of the repository generates (CMakeLists.txt, dgemm-kernel-bundle).
PACKAGE_KERNEL_DIR = _PACKAGE_DIR / "kernels"
_REPO_KERNEL_DIR = _REPO_ROOT / "build" / "share" / "dgemm" / "kernels"

# Return codes of the C ABI (runtime/include/dgemm/Runtime/Status.h).
_ERROR_NAMES = {
    1: "InvalidArgument",
    2: "NoDriver",
    3: "KernelNotFound",
    4: "BadKernelBundle",
    5: "CudaError",
    6: "UnsupportedDevice",
    7: "Internal",
}
_INVALID_ARGUMENT = 1
_ERR_LEN = 4096

_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[Path] = None


def candidate_paths() -> List[Path]:
    """Where the library is looked for, in order (``DGEMM_RUNTIME_LIB`` aside)."""
    return [
        _PACKAGE_DIR / LIBRARY_NAME,
        _REPO_ROOT / "build" / "runtime" / LIBRARY_NAME,
        _REPO_ROOT / "build" / "lib" / LIBRARY_NAME,
        # The runtime built on its own (docs/Runtime.md: cmake -S runtime -B build-rt).
        _REPO_ROOT / "build-rt" / LIBRARY_NAME,
    ]


def find_library() -> Path:
    """Returns the path of the library to load; RuntimeError if there is none."""
    env = os.environ.get(ENV_LIBRARY)
    if env:
        path = Path(env)
        if not path.is_file():
            raise RuntimeError(
                f"dgemm runtime library not found: {ENV_LIBRARY}={env} is not a file"
            )
        return path
    for path in candidate_paths():
        if path.is_file():
            return path
    tried = "\n  ".join(str(p) for p in candidate_paths())
    raise RuntimeError(
        f"dgemm runtime library {LIBRARY_NAME} not found. Set {ENV_LIBRARY} to its path, "
        f"copy it into the installed package, or build it (cmake --build build). Tried:\n  "
        f"{tried}"
    )


def _declare(lib: ctypes.CDLL) -> None:
    vp, i64, i32, u64 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32, ctypes.c_uint64
    fn = lib.dgemm_k_grouped_fp8_gemm_nt_contiguous
    fn.argtypes = [vp, vp, vp, vp, vp, vp, i64, i64, i32, ctypes.POINTER(i32), vp,
                   vp, u64, vp, ctypes.POINTER(ctypes.c_char), u64]
    fn.restype = ctypes.c_int
    fn = lib.dgemm_m_grouped_fp8_gemm_nt_contiguous
    fn.argtypes = [vp, vp, vp, vp, vp, vp, i64, i64, i64, i32, vp,
                   ctypes.POINTER(ctypes.c_char), u64]
    fn.restype = ctypes.c_int
    fn = lib.dgemm_m_grouped_fp8_gemm_nt_masked
    fn.argtypes = [vp, vp, vp, vp, vp, vp, i64, i64, i64, i32, i64, vp,
                   ctypes.POINTER(ctypes.c_char), u64]
    fn.restype = ctypes.c_int
    fn = lib.dgemm_fp8_gemm_nt
    fn.argtypes = [vp, vp, vp, vp, vp, i64, i64, i64, vp, ctypes.POINTER(ctypes.c_char), u64]
    fn.restype = ctypes.c_int
    fn = lib.dgemm_k_grouped_workspace_bytes
    fn.argtypes = [i64, i64, i32, ctypes.POINTER(i32)]
    fn.restype = u64
    lib.dgemm_set_kernel_dir.argtypes = [ctypes.c_char_p]
    lib.dgemm_set_kernel_dir.restype = ctypes.c_int
    lib.dgemm_runtime_version.argtypes = []
    lib.dgemm_runtime_version.restype = ctypes.c_char_p


def load() -> ctypes.CDLL:
    """Loads the library once (thread-safe) and applies ``DGEMM_KERNEL_DIR`` if set."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None:
            return _lib
        path = find_library()
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as e:
            raise RuntimeError(f"dgemm runtime library {path} could not be loaded: {e}") from e
        try:
            _declare(lib)
        except AttributeError as e:
            raise RuntimeError(
                f"{path} is not a dgemm runtime library (missing symbol): {e}"
            ) from e
        kernel_dir = os.environ.get(ENV_KERNEL_DIR) or default_kernel_dir(path)
        if kernel_dir:
            _set_kernel_dir(lib, str(kernel_dir))
        _lib, _lib_path = lib, path
        return lib


def default_kernel_dir(library: Path) -> Optional[Path]:
    """The bundle the package gives the runtime when ``DGEMM_KERNEL_DIR`` is unset: the
    package's own ``kernels/`` (an installed wheel), else, for a library from the
    repository's build, that build's bundle; None leaves the runtime's built-in default."""
    if (PACKAGE_KERNEL_DIR / "index.txt").is_file():
        return PACKAGE_KERNEL_DIR
    repo_libs = {p.resolve() for p in candidate_paths()[1:] if p.is_file()}
    if Path(library).resolve() in repo_libs and (_REPO_KERNEL_DIR / "index.txt").is_file():
        return _REPO_KERNEL_DIR
    return None


def loaded_path() -> Optional[Path]:
    """The path of the loaded library, or None before the first load."""
    return _lib_path


def _reset() -> None:
    """Forgets the loaded library so the next call looks it up again (tests)."""
    global _lib, _lib_path
    with _lock:
        _lib, _lib_path = None, None


def _set_kernel_dir(lib: ctypes.CDLL, kernel_dir: str) -> None:
    rc = lib.dgemm_set_kernel_dir(os.fsencode(kernel_dir))
    if rc != 0:
        raise RuntimeError(f"dgemm_set_kernel_dir({kernel_dir!r}) failed with code {rc}")


def set_kernel_dir(kernel_dir: str) -> None:
    """Points the runtime at a kernel bundle directory (overrides ``DGEMM_KERNEL_DIR``)."""
    _set_kernel_dir(load(), str(kernel_dir))


def check_kernel_bundle(kernel_dir: Optional[str] = None) -> dict:
    """Checks a kernel bundle as the runtime does before loading a kernel, for all of its
    kernels (``dgemm_check_kernel_bundle``): index.txt present and of this runtime's format
    and versions, every listed file there with its checksum. ``kernel_dir`` None checks the
    directory calls would use. Returns ``{"dir", "kernels", "cubins"}``; raises RuntimeError
    naming the file and the rule. Needs no GPU."""
    lib = load()
    fn = getattr(lib, "dgemm_check_kernel_bundle", None)
    if fn is None:
        raise RuntimeError(f"{loaded_path()} has no dgemm_check_kernel_bundle (an older "
                           f"runtime library)")
    i32p = ctypes.POINTER(ctypes.c_int32)
    fn.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char), ctypes.c_uint64, i32p,
                   i32p, ctypes.POINTER(ctypes.c_char), ctypes.c_uint64]
    fn.restype = ctypes.c_int
    resolved = ctypes.create_string_buffer(_ERR_LEN)
    err = ctypes.create_string_buffer(_ERR_LEN)
    kernels, cubins = ctypes.c_int32(0), ctypes.c_int32(0)
    rc = fn(None if kernel_dir is None else os.fsencode(str(kernel_dir)), resolved, _ERR_LEN,
            ctypes.byref(kernels), ctypes.byref(cubins), err, _ERR_LEN)
    if rc != 0:
        name = _ERROR_NAMES.get(rc, f"code {rc}")
        raise RuntimeError(f"dgemm runtime: {name}: "
                           f"{err.value.decode(errors='replace') or '(no message)'}")
    return {"dir": resolved.value.decode(errors="replace"), "kernels": int(kernels.value),
            "cubins": int(cubins.value)}


def version() -> str:
    """The runtime library's version string."""
    return load().dgemm_runtime_version().decode()


def _ks_array(ks: Sequence[int]):
    # ctypes wraps an out-of-range int silently: 2**31 would reach the runtime as -2**31.
    for i, k in enumerate(ks):
        if not -2**31 <= k < 2**31:
            raise ValueError(f"ks[{i}] = {k} does not fit in int32: every group size K_g must be "
                             f"at most {2**31 - 1}")
    return (ctypes.c_int32 * len(ks))(*ks)


def workspace_bytes(m: int, n: int, ks: Sequence[int]) -> int:
    return int(load().dgemm_k_grouped_workspace_bytes(m, n, len(ks), _ks_array(ks)))


def launch(
    a: int, sfa: int, b: int, sfb: int, d: int, c: int,
    m: int, n: int, ks: Sequence[int], ks_device: int,
    workspace: int, workspace_bytes: int, stream: int,
) -> None:
    """Enqueues the kernel on ``stream``; raises on a non-zero return code."""
    lib = load()
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = lib.dgemm_k_grouped_fp8_gemm_nt_contiguous(
        a, sfa, b, sfb, d, c, m, n, len(ks), _ks_array(ks), ks_device,
        workspace, workspace_bytes, stream, err, _ERR_LEN)
    _raise_for(rc, err)


def m_grouped_launch(
    a: int, sfa: int, b: int, sfb: int, d: int, grouped_layout: int,
    m_sum: int, n: int, k: int, num_groups: int, stream: int,
) -> None:
    """Enqueues the m-grouped kernel on ``stream``; raises on a non-zero return code."""
    lib = load()
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = lib.dgemm_m_grouped_fp8_gemm_nt_contiguous(
        a, sfa, b, sfb, d, grouped_layout, m_sum, n, k, num_groups, stream, err, _ERR_LEN)
    _raise_for(rc, err)


def psum_launch(
    a: int, sfa: int, b: int, sfb: int, d: int, psum: int,
    m_sum: int, n: int, k: int, num_groups: int, expected_m: int, stream: int,
) -> None:
    """Enqueues the m-grouped kernel with the prefix-sum layout on ``stream`` (expected_m 0:
    no hint); raises on a non-zero return code."""
    lib = load()
    fn = getattr(lib, "dgemm_m_grouped_fp8_gemm_nt_contiguous_psum", None)
    if fn is None:
        raise RuntimeError(f"{loaded_path()} has no dgemm_m_grouped_fp8_gemm_nt_contiguous_psum "
                           f"(an older runtime library): use_psum_layout=True needs a newer one")
    vp, i64, i32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32
    fn.argtypes = [vp, vp, vp, vp, vp, vp, i64, i64, i64, i32, i64, vp,
                   ctypes.POINTER(ctypes.c_char), ctypes.c_uint64]
    fn.restype = ctypes.c_int
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = fn(a, sfa, b, sfb, d, psum, m_sum, n, k, num_groups, expected_m, stream, err, _ERR_LEN)
    _raise_for(rc, err)


def masked_launch(
    a: int, sfa: int, b: int, sfb: int, d: int, masked_m: int,
    m_max: int, n: int, k: int, num_groups: int, expected_m: int, stream: int,
) -> None:
    """Enqueues the m-grouped masked kernel on ``stream``; raises on a non-zero return code."""
    lib = load()
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = lib.dgemm_m_grouped_fp8_gemm_nt_masked(
        a, sfa, b, sfb, d, masked_m, m_max, n, k, num_groups, expected_m, stream, err,
        _ERR_LEN)
    _raise_for(rc, err)


def normal_launch(
    a: int, sfa: int, b: int, sfb: int, d: int, m: int, n: int, k: int, stream: int,
) -> None:
    """Enqueues the normal FP8 1D2D kernel on ``stream``; raises on a non-zero return code."""
    lib = load()
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = lib.dgemm_fp8_gemm_nt(a, sfa, b, sfb, d, m, n, k, stream, err, _ERR_LEN)
    _raise_for(rc, err)


def _call(name: str, argtypes: list, *args) -> None:
    """Calls the C entry ``name`` (declared with ``argtypes`` and the trailing err, err_len)
    of the loaded library; raises as ``_raise_for`` does, or RuntimeError if the library
    lacks the entry (an older one)."""
    fn = getattr(load(), name, None)
    if fn is None:
        raise RuntimeError(f"{loaded_path()} has no {name} (an older runtime library)")
    fn.argtypes = list(argtypes) + [ctypes.POINTER(ctypes.c_char), ctypes.c_uint64]
    fn.restype = ctypes.c_int
    err = ctypes.create_string_buffer(_ERR_LEN)
    _raise_for(fn(*args, err, _ERR_LEN), err)


_VP, _I64, _I32 = ctypes.c_void_p, ctypes.c_int64, ctypes.c_int32


def bf16_launch(a: int, lda: int, major_a: int, b: int, ldb: int, major_b: int, d: int,
                d_f32: bool, accumulate: bool, m: int, n: int, k: int, stream: int) -> None:
    """Enqueues the normal BF16 GEMM (``dgemm_bf16_gemm``); major 0 = K-major, 1 = MN-major."""
    _call("dgemm_bf16_gemm", [_VP, _I64, _I32, _VP, _I64, _I32, _VP, _I32, _I32, _I64, _I64,
                              _I64, _VP],
          a, lda, major_a, b, ldb, major_b, d, int(d_f32), int(accumulate), m, n, k, stream)


def m_grouped_bf16_launch(a: int, b: int, major_b: int, d: int, layout: int, m_sum: int,
                          n: int, k: int, num_groups: int, expected_m: Optional[int],
                          stream: int) -> None:
    """Enqueues the m-grouped contiguous BF16 GEMM: with the per-row layout
    (``expected_m`` None) or the prefix sums (``expected_m`` 0: no hint)."""
    if expected_m is None:
        _call("dgemm_m_grouped_bf16_gemm_contiguous",
              [_VP, _VP, _I32, _VP, _VP, _I64, _I64, _I64, _I32, _VP],
              a, b, major_b, d, layout, m_sum, n, k, num_groups, stream)
    else:
        _call("dgemm_m_grouped_bf16_gemm_contiguous_psum",
              [_VP, _VP, _I32, _VP, _VP, _I64, _I64, _I64, _I32, _I64, _VP],
              a, b, major_b, d, layout, m_sum, n, k, num_groups, expected_m, stream)


def masked_bf16_launch(a: int, b: int, d: int, masked_m: int, m_max: int, n: int, k: int,
                       num_groups: int, expected_m: int, stream: int) -> None:
    """Enqueues the m-grouped masked BF16 GEMM."""
    _call("dgemm_m_grouped_bf16_gemm_nt_masked",
          [_VP, _VP, _VP, _VP, _I64, _I64, _I64, _I32, _I64, _VP],
          a, b, d, masked_m, m_max, n, k, num_groups, expected_m, stream)


def k_grouped_bf16_launch(a: int, b: int, d: int, accumulate: bool, m: int, n: int,
                          ks: Sequence[int], ks_device: int, stream: int) -> None:
    """Enqueues the k-grouped BF16 GEMM (FP32 d, ``accumulate``: d += product)."""
    _call("dgemm_k_grouped_bf16_gemm_tn_contiguous",
          [_VP, _VP, _VP, _I32, _I64, _I64, _I32, ctypes.POINTER(_I32), _VP, _VP],
          a, b, d, int(accumulate), m, n, len(ks), _ks_array(ks), ks_device, stream)


def _raise_for(rc: int, err) -> None:
    if rc != 0:
        message = err.value.decode(errors="replace") or "(no message)"
        name = _ERROR_NAMES.get(rc, f"code {rc}")
        exc = ValueError if rc == _INVALID_ARGUMENT else RuntimeError
        raise exc(f"dgemm runtime: {name}: {message}")


class _KernelInfo(ctypes.Structure):
    """``dgemm_kernel_info`` (runtime/include/dgemm/Runtime/dgemm_runtime.h)."""

    _fields_ = [("entry", ctypes.c_char * 128)] + [
        (name, ctypes.c_int32) for name in (
            "threads", "grid_x", "registers", "local_bytes", "spill_store_bytes",
            "spill_load_bytes", "static_smem_bytes", "dynamic_smem_bytes",
            "memory_bandwidth_gbps")] + [("calibration", ctypes.c_char * 8)]


def kernel_info(m: int, n: int, ks: Sequence[int], in_place: bool = True) -> dict:
    """What the kernel a call with these sizes would launch uses, on the current CUDA
    context's device (device 0 if none): its entry name (the configuration), threads and grid,
    registers per thread at launch, local memory per thread (spills and stack), the spill bytes
    of the JIT's log (-1 when it gave none, e.g. from the driver's JIT cache) and its static and
    dynamic shared memory, and the device's peak memory bandwidth in GB/s (0 unknown) with
    the calibration ("H100" or "H200") of the heuristics' measured rules it selected.
    ``in_place``: c is d. Loads the kernel as the call would. Raises
    ValueError for bad sizes, RuntimeError otherwise."""
    lib = load()
    fn = getattr(lib, "dgemm_k_grouped_kernel_info", None)
    if fn is None:
        raise RuntimeError(f"{loaded_path()} has no dgemm_k_grouped_kernel_info (an older "
                           f"runtime library)")
    fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int32,
                   ctypes.POINTER(ctypes.c_int32), ctypes.c_int32,
                   ctypes.POINTER(_KernelInfo), ctypes.POINTER(ctypes.c_char), ctypes.c_uint64]
    fn.restype = ctypes.c_int
    info = _KernelInfo()
    err = ctypes.create_string_buffer(_ERR_LEN)
    rc = fn(m, n, len(ks), _ks_array(ks), 1 if in_place else 0, ctypes.byref(info), err,
            _ERR_LEN)
    if rc != 0:
        message = err.value.decode(errors="replace") or "(no message)"
        name = _ERROR_NAMES.get(rc, f"code {rc}")
        exc = ValueError if rc == _INVALID_ARGUMENT else RuntimeError
        raise exc(f"dgemm runtime: {name}: {message}")
    out = {"entry": info.entry.decode(errors="replace")}
    out.update({name: int(getattr(info, name)) for name, _ in _KernelInfo._fields_[1:-1]})
    out["calibration"] = info.calibration.decode(errors="replace")
    return out


def allow_unsafe_kernels(allow: bool) -> None:
    """Whether the runtime may load kernels built with an unsafe option (race demonstrations,
    whose .meta says ``unsafe=`` something other than ``none``); refused by default. Takes
    precedence over ``DGEMM_ALLOW_UNSAFE_KERNELS`` and affects kernels loaded afterwards.
    Raises TypeError unless ``allow`` is a bool, RuntimeError if the library lacks the entry
    point (an older runtime) or refuses."""
    if not isinstance(allow, bool):
        raise TypeError(f"allow_unsafe_kernels: allow must be a bool, got {type(allow).__name__}")
    lib = load()
    fn = getattr(lib, "dgemm_set_allow_unsafe_kernels", None)
    if fn is None:
        raise RuntimeError(f"{loaded_path()} has no dgemm_set_allow_unsafe_kernels (an older "
                           f"runtime library)")
    fn.argtypes = [ctypes.c_int32]
    fn.restype = ctypes.c_int
    rc = fn(1 if allow else 0)
    if rc != 0:
        name = _ERROR_NAMES.get(rc, f"code {rc}")
        raise RuntimeError(f"dgemm runtime: {name}: dgemm_set_allow_unsafe_kernels({int(allow)}) "
                           f"failed")
