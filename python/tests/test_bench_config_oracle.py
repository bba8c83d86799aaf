"""bench/bench.py names the kernel the runtime will launch by calling the runtime's choice
(heuristics and environment overrides) through ctypes, with a Python mirror of the C++ config
struct. Checked against the built runtime library
(host code only: no GPU, no torch). Also its command-line check of the flush size.

The runtime reads its DGEMM_* overrides once per process; these tests change them between
calls, so every change is followed by the runtime's test hook that parses them again."""

import ctypes
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench  # noqa: E402

SEED_KS = [256, 128, 128, 256]
PREFIX = "dgemm_kgrouped_fp8_1d1d_"
REFUSED = "n/a (the runtime refused the DGEMM_* overrides)"
# dgemm::runtime::reloadEnvOverridesForTesting()
_RELOAD_SYMBOL = "_ZN5dgemm7runtime28reloadEnvOverridesForTestingEv"
OVERRIDES = ("DGEMM_RED_MAX_BLOCKS", "DGEMM_IN_PLACE_ONLY", "DGEMM_CLUSTER_M",
             "DGEMM_DESC_SLOTS", "DGEMM_BLOCK_N", "DGEMM_BLOCK_M", "DGEMM_STAGES",
             "DGEMM_QUAD_B", "DGEMM_PARK", "DGEMM_EPILOGUE", "DGEMM_UNSAFE")


class Env:
    """monkeypatch's setenv/delenv, each followed by the runtime parsing its overrides again."""

    def __init__(self, monkeypatch, lib):
        self.monkeypatch = monkeypatch
        self.reload = getattr(lib, _RELOAD_SYMBOL)
        self.reload.restype = None
        self.reload.argtypes = []

    def setenv(self, name, value):
        self.monkeypatch.setenv(name, value)
        self.reload()

    def delenv(self, name):
        self.monkeypatch.delenv(name, raising=False)
        self.reload()


@pytest.fixture
def runtime_lib():
    path = os.environ.get("DGEMM_RUNTIME_LIB", "")
    if not os.path.isfile(path):
        pytest.skip("DGEMM_RUNTIME_LIB names no built runtime library")
    lib = ctypes.CDLL(path)
    if not hasattr(lib, bench._SELECT_SYMBOL):
        pytest.skip(f"{path} exports no heuristics (a stub?)")
    return lib


@pytest.fixture
def oracle(runtime_lib):
    return bench.ConfigOracle(runtime_lib, 132, 232448, None)


@pytest.fixture
def no_overrides(monkeypatch, runtime_lib):
    """No runtime override set: the heuristics' own choice. Parsed again after the test
    (monkeypatch restores the environment only after this fixture's teardown, hence the
    explicit unsetting)."""
    env = Env(monkeypatch, runtime_lib)
    for var in OVERRIDES:
        monkeypatch.delenv(var, raising=False)
    env.reload()
    yield env
    for var in OVERRIDES:
        monkeypatch.delenv(var, raising=False)
    env.reload()


def test_register_and_reduction_kernels(oracle, no_overrides):
    monkeypatch = no_overrides
    # The seed shape (groups of 1-2 K blocks): 64-column tiles and the register epilogue,
    # in place too; quad-ordered B (N % 16 == 0). Groups of 8 blocks: 128-column tiles
    # and, in place, the reduction epilogue.
    assert oracle.entry(2048, 2048, SEED_KS) == PREFIX + "bm128_bn64_s8_r2_q"
    assert (oracle.entry(2048, 2048, SEED_KS, in_place=True)
            == PREFIX + "bm128_bn64_s8_r2_q")
    assert (oracle.entry(2048, 2048, [1024] * 4, in_place=True)
            == PREFIX + "bm128_bn128_s6_r2_red8_q")
    # Long groups: the in-place kernel (never paired, never quad-ordered) in place, the
    # register epilogue with a separate c, where N = 7168 pairs CTAs.
    assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
            == PREFIX + "bm128_bn192_s5_r2_ip")
    assert oracle.entry(4096, 7168, [8192] * 4) == PREFIX + "bm128_bn192_s5_r2_c2x1_q"
    # N % 16 != 0 keeps B's rows in order.
    assert not oracle.entry(2048, 2056, SEED_KS).endswith("_q")
    # The runtime's overrides, mirrored: they replace one field of the choice.
    monkeypatch.setenv("DGEMM_RED_MAX_BLOCKS", "0")
    assert (oracle.entry(2048, 2048, [1024] * 4, in_place=True)
            == PREFIX + "bm128_bn128_s6_r2_q")
    assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
            == PREFIX + "bm128_bn192_s5_r2_q")
    monkeypatch.setenv("DGEMM_IN_PLACE_ONLY", "1")
    assert oracle.entry(2048, 2048, SEED_KS, in_place=True) == PREFIX + "bm128_bn64_s8_r2_ip"
    assert oracle.entry(2048, 2048, SEED_KS) == PREFIX + "bm128_bn64_s8_r2_q"
    monkeypatch.delenv("DGEMM_RED_MAX_BLOCKS")
    monkeypatch.setenv("DGEMM_IN_PLACE_ONLY", "0")
    assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
            == PREFIX + "bm128_bn192_s5_r2_q")
    monkeypatch.setenv("DGEMM_QUAD_B", "0")
    assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
            == PREFIX + "bm128_bn192_s5_r2")
    assert oracle.entry(2048, 2048, SEED_KS) == PREFIX + "bm128_bn64_s8_r2"


def test_memory_bandwidth_selects_the_calibration(runtime_lib, no_overrides):
    # The third field of heuristics::Target: from 4000 GB/s the H200's measured rules.
    # Groups of 10 blocks in place: the register epilogue on the H100 (CTA pairs at
    # N = 4096), the parked kernel on the H200; groups of 5 blocks with a separate c:
    # 64 columns on the H100, 128 on the H200.
    h100 = bench.ConfigOracle(runtime_lib, 132, 232448, None, 3352)
    h200 = bench.ConfigOracle(runtime_lib, 132, 232448, None, 4800)
    unknown = bench.ConfigOracle(runtime_lib, 132, 232448, None)
    for oracle in (h100, unknown):
        assert (oracle.entry(4096, 4096, [1280] * 8, in_place=True)
                == PREFIX + "bm128_bn128_s6_r2_c2x1_q")
        assert oracle.entry(4096, 4096, [640] * 4) == PREFIX + "bm128_bn64_s8_r2_c2x1_q"
    assert (h200.entry(4096, 4096, [1280] * 8, in_place=True)
            == PREFIX + "bm128_bn128_s4_r2_ip_park")
    assert h200.entry(4096, 4096, [640] * 4) == PREFIX + "bm128_bn128_s6_r2_c2x1_q"
    # The shapes do not move.
    for oracle in (h100, h200):
        assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
                == PREFIX + "bm128_bn192_s5_r2_ip")
        assert oracle.entry(2048, 2048, SEED_KS, in_place=True) == PREFIX + "bm128_bn64_s8_r2_q"


def test_stages_override(oracle, no_overrides):
    monkeypatch = no_overrides
    # Fewer stages than fit (at least 2) replace the count; anything else is ignored,
    # as the runtime's DGEMM_STAGES does.
    monkeypatch.setenv("DGEMM_STAGES", "3")
    assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
            == PREFIX + "bm128_bn192_s3_r2_ip")
    assert (oracle.entry(2048, 2048, [1024] * 4, in_place=True)
            == PREFIX + "bm128_bn128_s3_r2_red8_q")
    # More stages than fit, or none given (empty), leave the choice alone ...
    for ignored in ("6", ""):
        monkeypatch.setenv("DGEMM_STAGES", ignored)
        assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
                == PREFIX + "bm128_bn192_s5_r2_ip"), ignored
    # ... a malformed value is refused (every call fails, naming the variable).
    for malformed in ("1", "x3", "3 "):
        monkeypatch.setenv("DGEMM_STAGES", malformed)
        assert oracle.entry(4096, 7168, [8192] * 4, in_place=True) == REFUSED, malformed


def test_block_m_override(runtime_lib, no_overrides):
    monkeypatch = no_overrides
    index = ["dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_ip",
             "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_ip",
             "dgemm_kgrouped_fp8_1d1d_bm192_bn128_s5_r2_ip",
             "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1",
             "dgemm_kgrouped_fp8_1d1d_bm192_bn128_s5_r2",
             "dgemm_kgrouped_fp8_1d1d_bm192_bn128_s5_r2_q"]
    oracle = bench.ConfigOracle(runtime_lib, 132, 232448, index)
    long_ks = [8192] * 4
    # 192 rows at the chosen 192 columns do not exist: ignored, as by the runtime.
    monkeypatch.setenv("DGEMM_BLOCK_M", "192")
    assert (oracle.entry(4096, 7168, long_ks, in_place=True)
            == PREFIX + "bm128_bn192_s5_r2_ip")
    # With 128 columns forced too: the three-warpgroup kernel, never paired.
    monkeypatch.setenv("DGEMM_BLOCK_N", "128")
    assert (oracle.entry(4096, 7168, long_ks, in_place=True)
            == PREFIX + "bm192_bn128_s5_r2_ip")
    assert oracle.entry(4096, 7168, long_ks) == PREFIX + "bm192_bn128_s5_r2_q"
    monkeypatch.setenv("DGEMM_BLOCK_M", "")  # empty: unset
    assert (oracle.entry(4096, 7168, long_ks, in_place=True)
            == PREFIX + "bm128_bn128_s6_r2_ip")
    for malformed in ("96", "tall"):
        monkeypatch.setenv("DGEMM_BLOCK_M", malformed)
        assert oracle.entry(4096, 7168, long_ks, in_place=True) == REFUSED, malformed


def test_flush_size_is_checked():
    # A flush smaller than the L2 would leave operands cached between timed runs.
    script = Path(__file__).resolve().parents[2] / "bench" / "bench.py"
    run = subprocess.run([sys.executable, str(script), "--flush-mb", "32"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "--flush-mb must be at least 64" in run.stderr


def test_parked_kernel(oracle, no_overrides):
    monkeypatch = no_overrides
    # Short groups in place: the 128-column kernel whose producer warpgroup's spare warps
    # add the parked tiles to d; DGEMM_PARK=0 keeps the math warpgroups' own epilogue.
    short = [2048] * 16
    assert oracle.entry(4096, 7168, short, in_place=True) == PREFIX + "bm128_bn128_s4_r2_ip_park"
    assert oracle.entry(4096, 7168, short) == PREFIX + "bm128_bn128_s6_r2_c2x1_q"
    monkeypatch.setenv("DGEMM_PARK", "0")
    assert oracle.entry(4096, 7168, short, in_place=True) == PREFIX + "bm128_bn128_s6_r2_ip"
    monkeypatch.setenv("DGEMM_PARK", "1")
    assert (oracle.entry(4096, 7168, [8192] * 4, in_place=True)
            == PREFIX + "bm128_bn192_s3_r2_ip_park")
    # DGEMM_EPILOGUE, which the older DGEMM_IN_PLACE_ONLY and DGEMM_PARK spell: not with them.
    monkeypatch.setenv("DGEMM_EPILOGUE", "parked")
    assert oracle.entry(4096, 7168, short, in_place=True) == REFUSED
    monkeypatch.delenv("DGEMM_PARK")
    assert oracle.entry(4096, 7168, short, in_place=True) == PREFIX + "bm128_bn128_s4_r2_ip_park"
    monkeypatch.setenv("DGEMM_EPILOGUE", "in_place")
    assert oracle.entry(4096, 7168, short, in_place=True) == PREFIX + "bm128_bn128_s6_r2_ip"
    monkeypatch.setenv("DGEMM_EPILOGUE", "reduction")
    assert (oracle.entry(4096, 7168, short, in_place=True)
            == PREFIX + "bm128_bn128_s6_r2_red8_q")
    # Only in place: a separate c has the register epilogue.
    assert oracle.entry(4096, 7168, short) == PREFIX + "bm128_bn128_s6_r2_c2x1_q"
    monkeypatch.setenv("DGEMM_EPILOGUE", "inplace")
    assert oracle.entry(4096, 7168, short) == REFUSED


def test_unsafe_variant_names(oracle, no_overrides):
    # DGEMM_UNSAFE selects the race-demonstration kernels by name (loading them needs the
    # opt-in, which choosing does not).
    monkeypatch = no_overrides
    monkeypatch.setenv("DGEMM_DESC_SLOTS", "1")
    monkeypatch.setenv("DGEMM_UNSAFE", "skip_descriptor_drain")
    assert oracle.entry(2048, 2048, SEED_KS) == PREFIX + "bm128_bn64_s8_r1_q_unsafe_nodrain"
    monkeypatch.setenv("DGEMM_UNSAFE", "skip_proxy_fence,skip_descriptor_drain")
    assert (oracle.entry(2048, 2048, SEED_KS)
            == PREFIX + "bm128_bn64_s8_r1_q_unsafe_nodrain_unsafe_nofence")
    monkeypatch.setenv("DGEMM_UNSAFE", "none")
    assert oracle.entry(2048, 2048, SEED_KS) == PREFIX + "bm128_bn64_s8_r1_q"
    monkeypatch.setenv("DGEMM_UNSAFE", "drain")
    assert oracle.entry(2048, 2048, SEED_KS) == REFUSED
