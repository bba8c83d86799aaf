"""bench/bench.py's DeepGEMM column: the configuration rule of bench/peers/deepgemm_kgrouped.cu
(our reading of DeepGEMM's SM90 heuristics) and its argument checks, through the peer
library's C ABI with an explicit SM count (host code only: no GPU, no torch).

Skipped unless the library is built (scripts/build_deepgemm_peer.sh, which downloads DeepGEMM's
headers from PyPI); CI does not build it."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench  # noqa: E402


@pytest.fixture
def peer():
    path = bench.default_deepgemm_peer()
    if not path or not Path(path).is_file():
        pytest.skip("DeepGEMM peer library not built (scripts/build_deepgemm_peer.sh)")
    return bench.DeepGemmPeer(path)


def test_every_benchmark_shape_has_a_kernel(peer):
    for shape in bench.make_shapes(quick=False):
        code, desc = peer.config(shape.ks, shape.m, shape.n, 132)
        assert code == 1, f"{shape.name()}: {desc}"


def test_configurations_follow_deepgemm_rules(peer):
    # Up to 4 groups with m >= 512: B multicast to a CTA pair; 152-column tiles (the widest
    # FP32-output 1D1D tile); four 37 KB stages next to the 76 KB D tile.
    code, desc = peer.config([8192] * 4, 4096, 7168, 132)
    assert "block=128x152 stages=4 multicast=2 on B sms=132" in desc
    # More than 4 groups: no multicast; the SM count lowered to ceil(blocks / waves):
    # 56 * 14 * 8 = 6272 blocks in 48 waves -> 131 SMs.
    code, desc = peer.config([4096] * 8, 7168, 2048, 132)
    assert "block=128x152 stages=4 multicast=1 sms=131" in desc
    # Short K limits the stages to ceil(max_k / 128).
    code, desc = peer.config([256, 128, 128, 256], 2048, 2048, 132)
    assert "stages=2 multicast=2 on B sms=128" in desc
    # m < 512: no multicast.
    code, desc = peer.config([1024] * 4, 256, 2048, 132)
    assert "multicast=1" in desc and code == 0   # valid, but not instantiated


def test_bad_arguments_name_the_constraint(peer):
    code, desc = peer.config([8192, 100], 4096, 7168, 132)
    assert code == -1 and "ks[1] = 100" in desc and "multiple of 128" in desc
    code, desc = peer.config([8192], 4098, 7168, 132)
    assert code == -1 and "multiples of 4" in desc and "m=4098" in desc
    code, desc = peer.config([0, 0], 4096, 7168, 132)
    assert code == -1 and "every group is empty" in desc
