"""bench/check_kinds.py (the GPU correctness script of the masked and normal GEMMs) without a
GPU: it imports, its case lists are well formed, and its host-side checks accept a right
result and reject a written poisoned row (--dry-run)."""

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import check_kinds  # noqa: E402


def test_dry_run_passes(capsys):
    assert check_kinds.main(["--dry-run"]) == 0
    assert "host-side checks pass" in capsys.readouterr().out


def test_masked_counts_cover_the_edges():
    rng = torch.Generator().manual_seed(0)
    assert check_kinds.masked_counts("zeros", 3, 64, rng) == [0, 0, 0]
    assert check_kinds.masked_counts("full", 2, 64, rng) == [64, 64]
    beyond = check_kinds.masked_counts("beyond", 6, 64, rng)
    assert min(beyond) < 0 and max(beyond) > 64
    assert check_kinds.clamped(beyond, 64) == [0, 64, 64, 0, 64, 0]
    with pytest.raises(ValueError, match="unknown masked_m kind"):
        check_kinds.masked_counts("most", 2, 64, rng)


def test_normal_cases_include_ragged_m_and_deepgemm_shapes():
    ms = {c.m for c in check_kinds.normal_cases(small=False)}
    assert {1, 127, 4097, 128, 4096} <= ms
    shapes = {(c.n, c.k) for c in check_kinds.normal_cases(small=False)}
    assert {(2112, 7168), (24576, 1536), (7168, 2048), (4096, 7168)} <= shapes


def test_masked_check_rejects_a_wrong_value():
    import dgemm

    case = check_kinds.MaskedCase("t", 2, 16, 16, 128, "full", 8)
    a, b = check_kinds.masked_operands(case, "cpu", torch.Generator().manual_seed(2))
    rows = [16, 16]
    ref = dgemm.m_grouped_masked_reference(a, b, rows)
    d = (-ref).to(torch.bfloat16)
    assert any("calc_diff" in p for p in check_kinds.check_masked_output(d, ref, rows))
