"""The bug report's repro (shared/seed), as our own acceptance test.

DeepGEMM 2.6.1's k_grouped_fp8_gemm_nt_contiguous gave nondeterministic, wrong
results on Hopper when an expert got exactly 128 tokens and one channel of its
`a` block was all zeros, depending on the scale given to that channel. Same
shapes, cast, packing and checks as the report: for each zero-channel scale,
no call's per-expert output norm exceeds 100x the reference norm (at least 1.0),
and every call is bitwise identical to the first. We also check the first
result against the reference computed from the FP8 operands.

DGEMM_SEED_ITERS sets the number of calls per scale (default 10000, as the report).
"""

import os

import pytest

torch = pytest.importorskip("torch")

import dgemm  # noqa: E402
from dgemm.testing import calc_diff  # noqa: E402

pytestmark = pytest.mark.gpu

KS = [256, 128, 128, 256]
HIDDEN = 2048  # grad_y channels: M
FFN = 2048     # activation channels: N


def _iterations() -> int:
    return int(os.environ.get("DGEMM_SEED_ITERS", "10000"))


def _build_inputs(device):
    g = torch.Generator(device=device).manual_seed(0)
    tokens = sum(KS)
    grad_y = torch.randn(tokens, HIDDEN, device=device, dtype=torch.bfloat16, generator=g) * 1e-7
    s = torch.randn(tokens, FFN, device=device, dtype=torch.bfloat16, generator=g) * 0.4
    start = 0
    for k in KS:
        if k == 128:
            # The trigger: an all-zero channel in an expert of exactly 128 tokens.
            grad_y[start:start + k, 0] = 0
        start += k
    return grad_y, s


def _unquantized_reference(grad_y, s):
    ref = torch.zeros(len(KS), HIDDEN, FFN, device=grad_y.device)
    start = 0
    for e, k in enumerate(KS):
        ref[e] = grad_y[start:start + k].float().t() @ s[start:start + k].float()
        start += k
    return ref


@pytest.mark.parametrize("sf_zero", [1.0, 1e-4, 1e-8, 1e-30])
def test_zero_channel_scale_never_changes_or_corrupts_the_result(sf_zero, real_runtime):
    device = torch.device("cuda", torch.cuda.current_device())
    iters = _iterations()
    groups = len(KS)
    grad_y, s = _build_inputs(device)
    # The report's cast: no amax floor, sf_zero for the all-zero channel.
    a = dgemm.make_k_grouped_operand(grad_y, KS, amax_floor=0.0, sf_zero=sf_zero)
    b = dgemm.make_k_grouped_operand(s, KS, amax_floor=0.0, sf_zero=sf_zero)
    ks_tensor = torch.tensor(KS, dtype=torch.int32, device=device)

    ref_norms = torch.linalg.vector_norm(_unquantized_reference(grad_y, s).view(groups, -1), dim=1)
    thresholds = (100.0 * ref_norms).clamp_min(1.0)
    expected = dgemm.k_grouped_reference(a, b, KS, HIDDEN, FFN)

    out = torch.empty(groups, HIDDEN, FFN, device=device)
    first = torch.empty_like(out)
    norms = torch.empty(iters, groups, device=device)
    mismatches = torch.zeros(iters, dtype=torch.int64, device=device)
    for it in range(iters):
        out.zero_()
        # As in the report: every call starts on an idle device.
        torch.cuda.synchronize()
        dgemm.k_grouped_fp8_gemm_nt_contiguous(
            a, b, out, KS, ks_tensor, out, recipe=(1, 1, 128), use_psum_layout=False)
        norms[it] = torch.linalg.vector_norm(out.view(groups, -1), dim=1)
        if it == 0:
            first.copy_(out)
        else:
            mismatches[it] = (out.view(torch.int32) != first.view(torch.int32)).sum()
    torch.cuda.synchronize()

    blown = (norms > thresholds).any(dim=1).nonzero().flatten().tolist()
    assert not blown, (
        f"{len(blown)}/{iters} calls blew up (first at iter {blown[0]}, experts "
        f"{(norms[blown[0]] > thresholds).nonzero().flatten().tolist()}); worst output norm "
        f"{norms.max().item():.3e} vs reference max {ref_norms.max().item():.3e}; sf_zero={sf_zero}")
    differing = mismatches.nonzero().flatten().tolist()
    assert not differing, (
        f"{len(differing)}/{iters} calls differ from the first (first at iter {differing[0]}, "
        f"{mismatches[differing[0]].item()} elements); sf_zero={sf_zero}")
    diff = calc_diff(first, expected)
    assert diff < 1e-3, f"first result vs the FP8 reference: calc_diff {diff:.3e}; sf_zero={sf_zero}"
