"""bench/ab.py's --shapes syntax (bench.parse_shape): equal, listed and drawn K per group, and
a clear error for each malformed spec. Host only: no GPU, no torch."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench  # noqa: E402


def test_equal_k_per_group():
    s = bench.parse_shape("4:2048:1024:256")
    assert (s.g, s.m, s.n, s.ks) == (4, 2048, 1024, [256] * 4)


def test_listed_k_per_group_keeps_order_and_zeros():
    s = bench.parse_shape("5:4096:2048:128/0/8192/256/1024")
    assert s.ks == [128, 0, 8192, 256, 1024]
    assert s.g == 5 and s.sum_k == 128 + 8192 + 256 + 1024


def test_drawn_k_is_reproducible_and_within_the_draw():
    a = bench.parse_shape("16:4096:4096:~1024")
    b = bench.parse_shape("16:4096:4096:~1024")
    assert a.ks == b.ks
    assert len(a.ks) == 16
    assert all(v % 128 == 0 and int(0.7 * 1024) <= v <= 1.3 * 1024 + 128 for v in a.ks)
    assert len(set(a.ks)) > 1
    assert bench.parse_shape("16:4096:4096:~2048").ks != a.ks


@pytest.mark.parametrize("spec, needle", [
    ("4:2048:1024", "expected G:M:N:K"),
    ("4:2048:x:256", "G, M and N must be integers"),
    ("0:2048:1024:256", "must be positive"),
    ("3:2048:1024:128/256", "2 K values for G = 3"),
    ("2:2048:1024:128/abc", "K must be an integer"),
    ("2:2048:1024:~", "K must be an integer"),
    ("2:2048:1024:100", "multiple of 128"),
    ("2:2048:1024:0/0", "sum to 0"),
])
def test_malformed_spec_names_the_problem(spec, needle):
    with pytest.raises(ValueError, match=needle):
        bench.parse_shape(spec)
