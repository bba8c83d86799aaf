"""Shared fixtures of the dgemm Python tests.

Run from the repository root: ``PYTHONPATH=python python3 -m pytest python``.
"""

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
# Importable without PYTHONPATH too.
sys.path.insert(0, str(_TESTS.parent))

from dgemm import _runtime  # noqa: E402

STUB_MAX_GROUPS = 64


class StubCall(ctypes.Structure):
    """Mirror of ``struct StubCall`` in stub_runtime.c."""

    _fields_ = [
        ("ptrs", ctypes.c_void_p * 6),
        ("m", ctypes.c_int64),
        ("n", ctypes.c_int64),
        ("num_groups", ctypes.c_int32),
        ("ks", ctypes.c_int32 * STUB_MAX_GROUPS),
        ("ks_device", ctypes.c_void_p),
        ("workspace", ctypes.c_void_p),
        ("workspace_bytes", ctypes.c_uint64),
        ("stream", ctypes.c_void_p),
        ("err_len", ctypes.c_uint64),
        ("calls", ctypes.c_int64),
    ]


class StubMCall(ctypes.Structure):
    """Mirror of ``struct StubMCall`` in stub_runtime.c."""

    _fields_ = [
        ("ptrs", ctypes.c_void_p * 6),
        ("m_sum", ctypes.c_int64),
        ("n", ctypes.c_int64),
        ("k", ctypes.c_int64),
        ("num_groups", ctypes.c_int32),
        ("stream", ctypes.c_void_p),
        ("err_len", ctypes.c_uint64),
        ("calls", ctypes.c_int64),
        ("expected_m", ctypes.c_int64),
        ("entry", ctypes.c_int32),
    ]


class StubBf16Call(ctypes.Structure):
    """Mirror of ``struct StubBf16Call`` in stub_runtime.c."""

    _fields_ = [
        ("ptrs", ctypes.c_void_p * 4),
        ("lda", ctypes.c_int64),
        ("ldb", ctypes.c_int64),
        ("major_a", ctypes.c_int32),
        ("major_b", ctypes.c_int32),
        ("d_f32", ctypes.c_int32),
        ("accumulate", ctypes.c_int32),
        ("m", ctypes.c_int64),
        ("n", ctypes.c_int64),
        ("k", ctypes.c_int64),
        ("num_groups", ctypes.c_int32),
        ("expected_m", ctypes.c_int64),
        ("ks", ctypes.c_int32 * STUB_MAX_GROUPS),
        ("stream", ctypes.c_void_p),
        ("calls", ctypes.c_int64),
        ("entry", ctypes.c_int32),
    ]


class Stub:
    """The stub library, opened a second time to read what the binding passed."""

    def __init__(self, path: Path):
        self.path = path
        self.lib = ctypes.CDLL(str(path))
        self.lib.stub_last_call.restype = ctypes.POINTER(StubCall)
        self.lib.stub_last_m_call.restype = ctypes.POINTER(StubMCall)
        self.lib.stub_last_bf16_call.restype = ctypes.POINTER(StubBf16Call)
        self.lib.stub_kernel_dir.restype = ctypes.c_char_p
        self.lib.stub_set_fail.argtypes = [ctypes.c_int]

    def last_call(self) -> StubCall:
        return self.lib.stub_last_call().contents

    def last_m_call(self) -> StubMCall:
        return self.lib.stub_last_m_call().contents

    def last_bf16_call(self) -> StubBf16Call:
        return self.lib.stub_last_bf16_call().contents

    def kernel_dir(self) -> str:
        return self.lib.stub_kernel_dir().decode()

    def set_fail(self, code: int) -> None:
        self.lib.stub_set_fail(code)


def _compile(tmp_dir: Path, source: Path, name: str) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc) to build the stub runtime library")
    out = tmp_dir / name
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(source)], check=True)
    return out


@pytest.fixture(scope="session")
def stub_library_path(tmp_path_factory) -> Path:
    return _compile(tmp_path_factory.mktemp("stub"), _TESTS / "stub_runtime.c",
                    "libdgemm_runtime.so")


@pytest.fixture
def stub(stub_library_path, monkeypatch) -> Stub:
    """Makes the binding load the stub library (through DGEMM_RUNTIME_LIB)."""
    monkeypatch.setenv(_runtime.ENV_LIBRARY, str(stub_library_path))
    monkeypatch.delenv(_runtime.ENV_KERNEL_DIR, raising=False)
    _runtime._reset()
    s = Stub(stub_library_path)
    s.set_fail(0)
    yield s
    s.set_fail(0)


def _gpu_skip_reason():
    try:
        import torch
    except ImportError:
        return "needs torch with CUDA (torch is not installed)"
    if not torch.cuda.is_available():
        return "needs a CUDA device (torch.cuda.is_available() is False)"
    if torch.cuda.get_device_capability() != (9, 0):
        return f"needs an SM90 (Hopper) GPU, found {torch.cuda.get_device_name()}"
    return None


def pytest_collection_modifyitems(config, items):
    # Tests marked gpu skip, with the reason, on a machine that cannot run them.
    reason = None
    for item in items:
        if item.get_closest_marker("gpu") is None:
            continue
        if reason is None:
            reason = _gpu_skip_reason() or ""
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def real_runtime():
    """The real runtime library. A GPU test fails, not skips, without it: a GPU
    run that skipped its GPU tests would look like a pass."""
    try:
        return _runtime.version()
    except RuntimeError as e:
        pytest.fail(f"the GPU tests need the dgemm runtime library: {e}")


@pytest.fixture(autouse=True)
def _fresh_runtime():
    # Every test looks the library up again, under its own environment.
    _runtime._reset()
    yield
    _runtime._reset()


@pytest.fixture
def compile_recording():
    """``run(fn, backend, *args)``: ``torch.compile(fn, fullgraph=True)`` with ``backend``,
    recording each graph it compiles; returns ``(fn's result, the graphs as text)``."""
    import torch

    def run(fn, backend, *args):
        graphs = []

        def recording(gm, example_inputs):
            graphs.append(str(gm.graph))
            return torch._dynamo.lookup_backend(backend)(gm, example_inputs)

        torch._dynamo.reset()
        return torch.compile(fn, fullgraph=True, backend=recording)(*args), graphs

    return run
