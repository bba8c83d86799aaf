"""dgemm.allow_unsafe_kernels: the Python side of dgemm_set_allow_unsafe_kernels, checked
against the stub library (what the binding passes) and, where DGEMM_RUNTIME_LIB names one,
the real runtime (its answer). No GPU needed."""

import ctypes
import os

import pytest

import dgemm
from dgemm import _runtime


def test_passes_the_flag(stub):
    dgemm.allow_unsafe_kernels(True)
    assert stub.lib.stub_allow_unsafe() == 1
    dgemm.allow_unsafe_kernels(False)
    assert stub.lib.stub_allow_unsafe() == 0


@pytest.mark.parametrize("bad", [1, 0, "yes", None, 1.0])
def test_only_a_bool(stub, bad):
    with pytest.raises(TypeError, match="allow must be a bool"):
        dgemm.allow_unsafe_kernels(bad)


def test_exported():
    assert "allow_unsafe_kernels" in dgemm.__all__
    assert dgemm.allow_unsafe_kernels is _runtime.allow_unsafe_kernels


def test_real_runtime_accepts_both(monkeypatch):
    path = os.environ.get("DGEMM_RUNTIME_LIB", "")
    if not os.path.isfile(path):
        pytest.skip("DGEMM_RUNTIME_LIB names no built runtime library")
    lib = ctypes.CDLL(path)
    if not hasattr(lib, "dgemm_set_allow_unsafe_kernels"):
        pytest.skip(f"{path} has no dgemm_set_allow_unsafe_kernels (a stub?)")
    lib.dgemm_set_allow_unsafe_kernels.argtypes = [ctypes.c_int32]
    assert lib.dgemm_set_allow_unsafe_kernels(1) == 0
    assert lib.dgemm_set_allow_unsafe_kernels(0) == 0
    assert lib.dgemm_set_allow_unsafe_kernels(2) == 1  # DGEMM_ERROR_INVALID_ARGUMENT
    # Through the binding too.
    monkeypatch.setenv(_runtime.ENV_LIBRARY, path)
    _runtime._reset()
    dgemm.allow_unsafe_kernels(True)
    dgemm.allow_unsafe_kernels(False)
    _runtime._reset()
