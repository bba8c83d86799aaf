"""Anatomy of a run-to-run difference: calls the k-grouped GEMM repeatedly on
fixed inputs, and for every element whose value is not the same in every call,
checks each call's value against a float64 reference and describes the wrong
ones: where they sit (group, tile, the CTA that owned the tile and its position
in that CTA's work list, warpgroup, warp, lane, accumulator register), and how
the error compares with the element's per-128-token-block contributions (a
block counted twice or missed, or a block taken from another group).

    PYTHONPATH=python DGEMM_RUNTIME_LIB=... DGEMM_KERNEL_DIR=... \
        python3 bench/race_probe.py [CALLS] [G:M:N:K ...]

A diagnostic, not a test: it prints, it asserts nothing. Needs the runtime's
config-selection symbol (as bench.py does) to know the tile shape."""
import collections
import os
import sys

import torch

import dgemm
from dgemm.testing import calc_diff

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (ConfigOracle: the tile shape the runtime picks)

BK = 128
# Shapes up to this many FLOP also get call 0 checked against float64.
CHECK_FLOP_LIMIT = 2e11
# RACE_PROBE_SEPARATE_C=1: pass a c other than d (default: accumulate into d in place).
SEPARATE_C = os.environ.get("RACE_PROBE_SEPARATE_C") == "1"


def uniform_inputs(m, n, ks, seed=0):
    """Fixed random operands for groups of K tokens ks: (a, b, ks_tensor, c)."""
    torch.manual_seed(seed)
    xa = torch.randn(sum(ks), m, device="cuda", dtype=torch.bfloat16)
    xb = torch.randn(sum(ks), n, device="cuda", dtype=torch.bfloat16)
    a = dgemm.make_k_grouped_operand(xa, ks)
    b = dgemm.make_k_grouped_operand(xb, ks)
    kt = torch.tensor(ks, dtype=torch.int32, device="cuda")
    c = torch.randn(len(ks), m, n, device="cuda", dtype=torch.float32)
    return a, b, kt, c


def config_for(m, n, ks):
    lib = dgemm._runtime.load()
    props = torch.cuda.get_device_properties(0)
    oracle = bench.ConfigOracle(lib, props.multi_processor_count, 232448, None,
                                bench.device_bandwidth_gbps(dgemm)[0])
    # The kernel the call below launches: in place unless RACE_PROBE_SEPARATE_C=1.
    name = oracle.entry(m, n, ks, in_place=not SEPARATE_C)
    bm = int(name.split("_bm")[1].split("_")[0])
    bn = int(name.split("_bn")[1].split("_")[0])
    return name, bm, bn, props.multi_processor_count


def contributions(a, b, ks, m, n, g, r, c):
    """float64 per-block contributions of element (g, r, c), for group g and
    for every other group's data at the same block index."""
    start = sum(ks[:g])
    k = ks[g]
    a_all, b_all = a[0].reshape(-1), b[0].reshape(-1)
    out = []
    for j in range(k // BK):
        kb = start // BK + j
        av = a_all[m * start + r * k + j * BK: m * start + r * k + (j + 1) * BK].float().double()
        bv = b_all[n * start + c * k + j * BK: n * start + c * k + (j + 1) * BK].float().double()
        out.append(float((av * bv).sum()) * float(a[1][r, kb]) * float(b[1][c, kb]))
    return out


def probe(g, m, n, k, calls):
    ks = [k] * g
    name, bm, bn, sms = config_for(m, n, ks)
    tm, tn = (m + bm - 1) // bm, (n + bn - 1) // bn
    tiles = g * tm * tn
    cluster = 2 if name.endswith("_c2x1") else 1
    grid = max(cluster, min(tiles, sms) // cluster * cluster)
    units_per_group = -(-tm // cluster) * tn   # schedule units: m-block pairs with clusters
    a, b, kt, c = uniform_inputs(m, n, ks)
    d = torch.empty_like(c)
    outs = []
    for _ in range(calls):
        if SEPARATE_C:   # d = c + sum from registers; NaN poison shows unwritten elements
            d.fill_(float("nan"))
            dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, c)
        else:            # in place, as DeepGEMM's callers use it
            d.copy_(c)
            dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, kt, d)
        outs.append(d.clone())
    torch.cuda.synchronize()
    if 2.0 * m * n * sum(ks) <= CHECK_FLOP_LIMIT:
        ref = dgemm.k_grouped_reference(a, b, ks, m, n, c)
        print(f"   calc_diff of call 0 against the float64 reference: "
              f"{float(calc_diff(outs[0], ref)):.3e}", flush=True)
    stack = torch.stack(outs)
    varies = (stack != stack[0:1]).any(0) | torch.isnan(stack).any(0)
    idx = torch.nonzero(varies)
    print(f"== G={g} M={m} N={n} K={k} kernel {name} grid {grid} tiles {tiles}: "
          f"{int(varies.sum())} elements vary over {calls} calls; calls differing from "
          f"call 0: {sum(int(not torch.equal(o, outs[0])) for o in outs)}", flush=True)
    if len(idx) == 0:
        return
    hist = {key: collections.Counter() for key in
            ("group", "cta", "order", "first_of_group", "wg", "warp", "lane", "reg",
             "row%bm", "col%bn", "tile", "call", "match")}
    limit = 400
    sample = idx[torch.randperm(len(idx), device=idx.device)[:limit]]
    for gi, r, col in sample.tolist():
        mb, nb = r // bm, col // bn
        t = gi * tm * tn + mb * tn + nb
        # The kernel's schedule: unit u = (group, m-block pair, n-block);
        # cluster c takes units c, c + grid / cluster, ...; rank = m-block % cluster.
        u = gi * units_per_group + (mb // cluster) * tn + nb
        clusters = grid // cluster
        cta, order = (u % clusters) * cluster + mb % cluster, u // clusters
        prev_u = u - clusters
        first = prev_u < 0 or prev_u // units_per_group != gi
        rr, cc = r % bm, col % bn
        wg, r64 = rr // 64, rr % 64
        warp, lane = r64 // 16, (r64 % 8) * 4 + (cc % 8) // 2
        reg = (cc // 8) * 4 + ((r64 % 16) // 8) * 2 + cc % 2
        contrib = contributions(a, b, ks, m, n, gi, r, col)
        ref = float(c[gi, r, col]) + sum(contrib)
        for call in range(calls):
            v = float(stack[call, gi, r, col])
            err = v - ref
            if abs(err) <= 1e-3 * max(1.0, abs(ref)):
                continue
            for key, val in (("group", gi), ("cta", cta), ("order", order),
                             ("first_of_group", first), ("wg", wg), ("warp", warp),
                             ("lane", lane), ("reg", reg), ("row%bm", rr), ("col%bn", cc),
                             ("tile", t), ("call", call)):
                hist[key][val] += 1
            best = min(range(len(contrib)), key=lambda j: min(abs(err - contrib[j]),
                                                                abs(err + contrib[j])))
            sign = "+" if abs(err - contrib[best]) < abs(err + contrib[best]) else "-"
            resid = min(abs(err - contrib[best]), abs(err + contrib[best]))
            tag = f"{sign}block{best}/{len(contrib)}" if resid < 1e-2 * max(1, abs(err)) \
                else "no-single-block"
            hist["match"][tag] += 1
            if sum(hist["call"].values()) <= 12:
                print(f"  call {call} g={gi} r={r} c={col} tile={t} cta={cta} order={order} "
                      f"first_of_group={first} wg={wg} warp={warp} lane={lane} reg={reg}: "
                      f"got {v:.6g} ref {ref:.6g} err {err:.6g}; nearest block {best} "
                      f"contrib {contrib[best]:.6g} ({tag}); "
                      f"contribs[:6]={[round(x, 3) for x in contrib[:6]]}", flush=True)
    print(f"  ({min(limit, len(idx))} randomly chosen varying elements analysed)")
    for key, h in hist.items():
        items = sorted(h.items(), key=lambda kv: -kv[1])
        print(f"  {key}: {len(h)} distinct; top {items[:16]}", flush=True)


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    shapes = sys.argv[2:] or ["16:7168:2048:2048", "4:2048:2048:2048"]
    for s in shapes:
        probe(*(int(v) for v in s.split(":")), calls)


if __name__ == "__main__":
    main()
