"""bench/check_bf16.py (the GPU correctness script of the BF16 GEMMs): without a GPU its
--dry-run (every case's call passes the argument checks on fake tensors of its shapes, the
host-side checks accept a right result and reject wrong ones); on an SM90 GPU with the real
runtime its small cases (every kind and layout, masked_m edges, graph replay)."""

import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op needs torch >= 2.4", allow_module_level=True)
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import check_bf16  # noqa: E402


def test_dry_run_passes(capsys):
    assert check_bf16.main(["--dry-run"]) == 0
    assert "host-side checks pass" in capsys.readouterr().out


def test_cases_cover_every_kind_layout_and_output():
    import random

    cases = check_bf16.all_cases(False, random.Random(0))
    normal = {(c.layout, c.out, c.c) for c in cases if c.kind == "normal"}
    assert {(lay, out, c) for lay in ("nt", "nn", "tn", "tt")
            for out, c in (("bf16", "none"), ("f32", "none"), ("f32", "d"),
                           ("f32", "separate"))} <= normal
    grouped = {(c.layout, c.psum) for c in cases if c.kind == "m_grouped"}
    assert {(lay, p) for lay in ("nt", "nt_mt", "nn") for p in (False, True)} <= grouped
    masked = [c for c in cases if c.kind == "masked"]
    assert {c.name for c in masked} >= {"zeros", "ones", "full", "random", "beyond"}
    k_grouped = [c for c in cases if c.kind == "k_grouped"]
    assert {c.c for c in k_grouped} == {"none", "d", "separate"}
    assert any(sum(c.groups) == 0 for c in k_grouped)
    assert any(0 in c.groups and sum(c.groups) for c in k_grouped)
    # DeepGEMM's shapes are there.
    assert any(c.m == 4096 and (c.n, c.k) == (129280, 7168) for c in cases)
    assert any(c.m == 4096 and c.expected_m == 192 and len(c.groups) == 32 for c in masked)


def test_checks_reject_unwritten_and_overwritten_rows():
    ref = torch.randn(2, 4, 8)
    valid = torch.tensor([[True, True, False, False], [True, False, False, False]])
    d = ref.to(torch.bfloat16)
    d[~valid] = float("nan")
    assert check_bf16.check_output(d, ref, valid) == []
    d[0, 1] = float("nan")
    assert check_bf16.check_output(d, ref, valid) == ["non-finite values"]


def _bundle_has_bf16_kernels():
    import dgemm

    try:
        bundle = Path(dgemm.check_kernel_bundle()["dir"])
    except RuntimeError as e:
        return f"no usable kernel bundle: {e}"
    if not any(bundle.glob("*_bf16_*.meta")):
        return f"the bundle {bundle} holds no BF16 kernels (built before the compiler had them)"
    return None


@pytest.mark.gpu
def test_small_cases_on_the_gpu(real_runtime):
    reason = _bundle_has_bf16_kernels()
    if reason:
        pytest.skip(reason)
    assert check_bf16.main(["--small", "--repeats", "1"]) == 0


def test_bench_bf16_imports_and_times_with_bench_m_grouped():
    import bench_bf16
    import bench_m_grouped

    assert bench_bf16.timed is bench_m_grouped.timed
    assert (129280, 7168) in bench_bf16.NORMAL_F32_NK
    assert len(bench_bf16.K_GROUPED) == 7
