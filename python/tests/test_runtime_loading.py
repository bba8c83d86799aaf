"""Finding and loading the runtime library, and the ctypes calls: no torch, no GPU.

The calls go to tests/stub_runtime.c, built here with the host C compiler, which
records its arguments.
"""

import shutil
import subprocess
import sys

import pytest

import dgemm
from dgemm import _runtime


def test_import_needs_neither_the_library_nor_torch():
    code = ("import sys; sys.modules['torch'] = None; import dgemm; "
            "assert 'k_grouped_fp8_gemm_nt_contiguous' in dir(dgemm)")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={"PYTHONPATH": str(_runtime._PACKAGE_DIR.parent),
                        "DGEMM_RUNTIME_LIB": "/nonexistent/libdgemm_runtime.so"})


def test_missing_library_named_by_env_is_a_runtime_error_at_call_time(monkeypatch):
    monkeypatch.setenv("DGEMM_RUNTIME_LIB", "/nonexistent/libdgemm_runtime.so")
    with pytest.raises(RuntimeError, match=r"DGEMM_RUNTIME_LIB=/nonexistent/libdgemm_runtime.so is not a file"):
        dgemm.runtime_version()


def test_missing_library_lists_the_places_tried(monkeypatch, tmp_path):
    monkeypatch.delenv("DGEMM_RUNTIME_LIB", raising=False)
    monkeypatch.setattr(_runtime, "_PACKAGE_DIR", tmp_path / "pkg")
    monkeypatch.setattr(_runtime, "_REPO_ROOT", tmp_path / "repo")
    with pytest.raises(RuntimeError, match=r"libdgemm_runtime.so not found") as e:
        dgemm.runtime_version()
    message = str(e.value)
    assert "DGEMM_RUNTIME_LIB" in message
    for p in ("pkg/libdgemm_runtime.so", "repo/build/runtime/libdgemm_runtime.so",
              "repo/build/lib/libdgemm_runtime.so", "repo/build-rt/libdgemm_runtime.so"):
        assert str(tmp_path / p) in message


def test_lookup_order_is_package_then_build_dirs(monkeypatch, tmp_path, stub_library_path):
    monkeypatch.delenv("DGEMM_RUNTIME_LIB", raising=False)
    monkeypatch.setattr(_runtime, "_PACKAGE_DIR", tmp_path / "pkg")
    monkeypatch.setattr(_runtime, "_REPO_ROOT", tmp_path / "repo")
    # Added from the last choice to the first: each new copy must win.
    places = [tmp_path / "repo/build-rt", tmp_path / "repo/build/lib",
              tmp_path / "repo/build/runtime", tmp_path / "pkg"]
    for place in places:
        place.mkdir(parents=True)
        shutil.copy(stub_library_path, place / "libdgemm_runtime.so")
        assert _runtime.find_library() == place / "libdgemm_runtime.so"


def test_env_overrides_the_package_copy(monkeypatch, tmp_path, stub_library_path):
    monkeypatch.setattr(_runtime, "_PACKAGE_DIR", tmp_path)
    (tmp_path / "libdgemm_runtime.so").write_bytes(b"not a library")
    monkeypatch.setenv("DGEMM_RUNTIME_LIB", str(stub_library_path))
    assert dgemm.runtime_version() == "stub-1"
    assert _runtime.loaded_path() == stub_library_path


def test_a_file_that_is_not_a_library_is_a_runtime_error(monkeypatch, tmp_path):
    bogus = tmp_path / "libdgemm_runtime.so"
    bogus.write_bytes(b"not a library")
    monkeypatch.setenv("DGEMM_RUNTIME_LIB", str(bogus))
    with pytest.raises(RuntimeError, match=r"could not be loaded"):
        dgemm.runtime_version()


def test_a_library_without_the_abi_is_a_runtime_error(monkeypatch, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler (cc)")
    src = tmp_path / "other.c"
    src.write_text("int unrelated(void) { return 0; }\n")
    lib = tmp_path / "libother.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    monkeypatch.setenv("DGEMM_RUNTIME_LIB", str(lib))
    with pytest.raises(RuntimeError, match=r"is not a dgemm runtime library \(missing symbol\)"):
        dgemm.runtime_version()


def test_version_comes_from_the_library(stub):
    assert dgemm.runtime_version() == "stub-1"


def test_kernel_dir_env_is_passed_to_the_runtime(stub, monkeypatch, tmp_path):
    monkeypatch.setenv("DGEMM_KERNEL_DIR", str(tmp_path))
    _runtime.load()
    assert stub.kernel_dir() == str(tmp_path)


def test_set_kernel_dir_passes_through_and_reports_failure(stub):
    dgemm.set_kernel_dir("/some/bundle")
    assert stub.kernel_dir() == "/some/bundle"
    dgemm.set_kernel_dir("")
    assert stub.kernel_dir() == ""
    with pytest.raises(RuntimeError, match=r"dgemm_set_kernel_dir\('<fail>'\) failed with code 1"):
        dgemm.set_kernel_dir("<fail>")


def test_workspace_bytes_passes_sizes_and_host_ks(stub):
    assert _runtime.workspace_bytes(256, 512, [128, 0, 384]) == 128 * (256 + 512 + 3) + 512


def test_ks_beyond_int32_never_reach_the_runtime(stub):
    # ctypes would pass 2**31 on as -2**31.
    with pytest.raises(ValueError, match=r"ks\[1\] = 2147483648 does not fit in int32"):
        _runtime.workspace_bytes(256, 512, [128, 2**31])
    with pytest.raises(ValueError, match=r"ks\[0\] = 4294967296 does not fit in int32"):
        dgemm.kernel_info(256, 512, [2**32])


def test_launch_passes_every_argument_with_its_c_type(stub):
    big = 1 << 40  # pointers and sizes above 32 bits must survive
    _runtime.launch(
        a=big + 0x100, sfa=big + 0x200, b=big + 0x300, sfb=big + 0x400, d=big + 0x500,
        c=big + 0x600, m=3 * 2**31, n=4096, ks=[128, 0, 2**20], ks_device=big + 0x700,
        workspace=big + 0x800, workspace_bytes=2**33, stream=big + 0x900)
    call = stub.last_call()
    assert list(call.ptrs) == [big + 0x100, big + 0x200, big + 0x300, big + 0x400,
                               big + 0x500, big + 0x600]
    assert (call.m, call.n, call.num_groups) == (3 * 2**31, 4096, 3)
    assert list(call.ks[:3]) == [128, 0, 2**20]
    assert (call.ks_device, call.workspace, call.workspace_bytes, call.stream) == (
        big + 0x700, big + 0x800, 2**33, big + 0x900)
    assert call.err_len == _runtime._ERR_LEN


def test_launch_passes_null_for_zero_pointers(stub):
    _runtime.launch(0x100, 0x200, 0x300, 0x400, 0x500, 0x500, 4, 4, [128], 0x600, 0, 0, 0)
    call = stub.last_call()
    assert call.workspace is None and call.stream is None


def test_m_grouped_launch_passes_every_argument_with_its_c_type(stub):
    big = 1 << 40
    _runtime.m_grouped_launch(
        a=big + 0x100, sfa=big + 0x200, b=big + 0x300, sfb=big + 0x400, d=big + 0x500,
        grouped_layout=big + 0x600, m_sum=3 * 2**31, n=4096, k=7168, num_groups=8,
        stream=big + 0x700)
    call = stub.last_m_call()
    assert call.entry == 0 and call.expected_m == -1
    assert list(call.ptrs) == [big + 0x100, big + 0x200, big + 0x300, big + 0x400,
                               big + 0x500, big + 0x600]
    assert (call.m_sum, call.n, call.k, call.num_groups) == (3 * 2**31, 4096, 7168, 8)
    assert call.stream == big + 0x700 and call.err_len == _runtime._ERR_LEN


def test_masked_launch_passes_every_argument_with_its_c_type(stub):
    big = 1 << 40
    _runtime.masked_launch(
        a=big + 0x100, sfa=big + 0x200, b=big + 0x300, sfb=big + 0x400, d=big + 0x500,
        masked_m=big + 0x600, m_max=3 * 2**31, n=4096, k=7168, num_groups=8,
        expected_m=5 * 2**31, stream=big + 0x700)
    call = stub.last_m_call()
    assert call.entry == 1
    assert list(call.ptrs) == [big + 0x100, big + 0x200, big + 0x300, big + 0x400,
                               big + 0x500, big + 0x600]
    assert (call.m_sum, call.n, call.k, call.num_groups) == (3 * 2**31, 4096, 7168, 8)
    assert call.expected_m == 5 * 2**31
    assert call.stream == big + 0x700 and call.err_len == _runtime._ERR_LEN


def test_psum_launch_passes_every_argument_with_its_c_type(stub):
    big = 1 << 40
    _runtime.psum_launch(
        a=big + 0x100, sfa=big + 0x200, b=big + 0x300, sfb=big + 0x400, d=big + 0x500,
        psum=big + 0x600, m_sum=3 * 2**31, n=4096, k=7168, num_groups=8,
        expected_m=5 * 2**31, stream=big + 0x700)
    call = stub.last_m_call()
    assert call.entry == 3
    assert list(call.ptrs) == [big + 0x100, big + 0x200, big + 0x300, big + 0x400,
                               big + 0x500, big + 0x600]
    assert (call.m_sum, call.n, call.k, call.num_groups) == (3 * 2**31, 4096, 7168, 8)
    assert call.expected_m == 5 * 2**31
    assert call.stream == big + 0x700 and call.err_len == _runtime._ERR_LEN


def test_normal_launch_passes_every_argument_with_its_c_type(stub):
    big = 1 << 40
    _runtime.normal_launch(a=big + 0x100, sfa=big + 0x200, b=big + 0x300, sfb=big + 0x400,
                           d=big + 0x500, m=3 * 2**31, n=2112, k=7168, stream=big + 0x700)
    call = stub.last_m_call()
    assert call.entry == 2
    assert list(call.ptrs) == [big + 0x100, big + 0x200, big + 0x300, big + 0x400,
                               big + 0x500, None]
    assert (call.m_sum, call.n, call.k, call.num_groups) == (3 * 2**31, 2112, 7168, 1)
    assert call.stream == big + 0x700 and call.err_len == _runtime._ERR_LEN


@pytest.mark.parametrize("launch,args", [
    ("masked_launch", (1, 2, 3, 4, 5, 6, 128, 128, 128, 1, 64, 0)),
    ("normal_launch", (1, 2, 3, 4, 5, 128, 128, 128, 0)),
    ("psum_launch", (1, 2, 3, 4, 5, 6, 128, 128, 128, 1, 0, 0)),
])
def test_new_launches_raise_for_the_code(stub, launch, args):
    stub.set_fail(1)
    with pytest.raises(ValueError, match=r"dgemm runtime: InvalidArgument: stub failure 1"):
        getattr(_runtime, launch)(*args)
    stub.set_fail(6)
    with pytest.raises(RuntimeError, match=r"dgemm runtime: UnsupportedDevice: stub failure 6"):
        getattr(_runtime, launch)(*args)
    stub.set_fail(0)


def test_m_grouped_launch_failure_names_the_code(stub):
    stub.set_fail(1)
    with pytest.raises(ValueError, match=r"dgemm runtime: InvalidArgument: stub failure 1"):
        _runtime.m_grouped_launch(1, 2, 3, 4, 5, 6, 128, 128, 128, 1, 0)
    stub.set_fail(0)


def test_invalid_argument_from_the_runtime_is_a_value_error(stub):
    stub.set_fail(1)
    with pytest.raises(ValueError, match=r"dgemm runtime: InvalidArgument: stub failure 1"):
        _runtime.launch(16, 16, 16, 16, 16, 16, 4, 4, [128], 16, 0, 0, 0)


@pytest.mark.parametrize("code,name", [(2, "NoDriver"), (3, "KernelNotFound"), (5, "CudaError"),
                                       (6, "UnsupportedDevice"), (42, "code 42")])
def test_other_runtime_failures_are_runtime_errors(stub, code, name):
    stub.set_fail(code)
    with pytest.raises(RuntimeError, match=rf"dgemm runtime: {name}: stub failure {code}"):
        _runtime.launch(16, 16, 16, 16, 16, 16, 4, 4, [128], 16, 0, 0, 0)


def test_kernel_info_maps_every_field(stub):
    info = dgemm.kernel_info(2048, 4096, [256, 128], in_place=False)
    assert info == {"entry": "stub_m2048_n4096_g2_ip0", "threads": 384, "grid_x": 2,
                    "registers": 168, "local_bytes": 0, "spill_store_bytes": -1,
                    "spill_load_bytes": 256, "static_smem_bytes": 7,
                    "dynamic_smem_bytes": 4096, "memory_bandwidth_gbps": 2048,
                    "calibration": "H100"}
    in_place = dgemm.kernel_info(64, 64, [128])
    assert in_place["entry"].endswith("_ip1")
    assert in_place["calibration"] == "H200"


def test_kernel_info_bad_sizes_are_value_errors(stub):
    with pytest.raises(ValueError, match=r"argument 'm' must be >= 1, got 0"):
        dgemm.kernel_info(0, 64, [128])


def test_package_bundle_is_the_default_kernel_dir(stub, monkeypatch, tmp_path):
    # An installed wheel's kernels/ (with its index) is given to the runtime when
    # DGEMM_KERNEL_DIR is unset; the variable, when set, wins.
    monkeypatch.delenv("DGEMM_KERNEL_DIR", raising=False)
    (tmp_path / "index.txt").write_text("format=2\n")
    monkeypatch.setattr(_runtime, "PACKAGE_KERNEL_DIR", tmp_path)
    _runtime.load()
    assert stub.kernel_dir() == str(tmp_path)
    _runtime._reset()
    monkeypatch.setenv("DGEMM_KERNEL_DIR", "/from/env")
    _runtime.load()
    assert stub.kernel_dir() == "/from/env"


def test_package_without_bundle_leaves_the_runtime_default(stub, monkeypatch, tmp_path):
    monkeypatch.delenv("DGEMM_KERNEL_DIR", raising=False)
    monkeypatch.setattr(_runtime, "PACKAGE_KERNEL_DIR", tmp_path)  # no index.txt
    stub.lib.dgemm_set_kernel_dir(b"unchanged")
    _runtime.load()
    assert stub.kernel_dir() == "unchanged"


def test_check_kernel_bundle_needs_the_entry_point(stub):
    with pytest.raises(RuntimeError, match="has no dgemm_check_kernel_bundle"):
        dgemm.check_kernel_bundle()
