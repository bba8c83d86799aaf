#!/usr/bin/env python3
"""Interleaved A/B timing of kernel bundles on bench.py's shapes, in one process.

    PYTHONPATH=python DGEMM_RUNTIME_LIB=... python3 bench/ab.py BUNDLE_A BUNDLE_B [...] [--rounds N]

A bundle may carry runtime overrides for its calls: DIR@VAR=VALUE[,VAR=VALUE...] (for
example build/bundle@DGEMM_BLOCK_N=160 times the bundle with the tile width forced). The name
`deepgemm` (or `deepgemm=LIBRARY`) stands for DeepGEMM's own kernel through the peer library
of bench.py's DeepGEMM column (scripts/build_deepgemm_peer.sh; in place only); its result is
compared with the first bundle's by calc_diff instead of bit for bit.

Back-to-back bench.py runs of two bundles differ by several percent even for identical kernels
(clocks are not locked and the card runs at its power cap), so a few-percent change cannot be
told from drift that way. Here every round times one call of each bundle in turn (the runtime
resolves DGEMM_KERNEL_DIR on every call and caches modules per directory), each after an L2
flush, so drift hits all bundles alike. The first call after the host synchronizes runs slower
(measured: by 10-40%), so each round starts with an untimed call and the order rotates. Per shape it prints the median time of each bundle and
the median over rounds of each bundle's time relative to the first bundle's in the same round.

Every bundle's result is checked against the first bundle's bit for bit on the first round
(same inputs, no split-K: they must agree unless a kernel is wrong). A diagnostic, not a test.
"""
import argparse
import os
import statistics
import sys
import time

import torch

import dgemm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (shapes, L2 flush size)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundles", nargs="+")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--shapes", default="",
                        help="comma-separated shapes to time instead of bench.py's: G:M:N:K "
                             "(K per group, all groups equal), G:M:N:K1/K2/... (one K per "
                             "group, G of them), G:M:N:~K (each K drawn as expected K x "
                             "U(0.7, 1.3) rounded up to 128, fixed seed), 'seed' (the bug "
                             "report's shape with bench.py's K per group) or 'large' "
                             "(bench.py's other shapes, its K per group)")
    parser.add_argument("--separate-c", action="store_true",
                        help="d = c + sum with c other than d (default: accumulate into d in place)")
    args = parser.parse_args()
    if len(args.bundles) < 2:
        parser.error("give at least two bundle directories")
    flush = torch.empty(bench.L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    khz = getattr(torch.cuda.get_device_properties(0), "clock_rate", 0) or 1980000
    cycles_per_us = khz / 1000.0
    specs = []   # (directory, {variable: value}); directory None: DeepGEMM's kernel
    peer = None
    for spec in args.bundles:
        if spec == "deepgemm" or spec.startswith("deepgemm="):
            lib = spec.partition("=")[2] or bench.default_deepgemm_peer()
            if not lib or not os.path.isfile(lib):
                parser.error("deepgemm: no peer library (scripts/build_deepgemm_peer.sh, or "
                             "deepgemm=PATH)")
            if args.separate_c:
                parser.error("deepgemm runs in place only; drop --separate-c")
            peer = bench.DeepGemmPeer(lib)
            specs.append((None, {}))
            continue
        path, _, overrides = spec.partition("@")
        env = dict(kv.split("=", 1) for kv in overrides.split(",") if kv)
        specs.append((path, env))
    override_vars = {v for _, env in specs for v in env}
    names = ["deepgemm" if p is None else
             os.path.basename(os.path.normpath(p)) + ("@" + ",".join(f"{k}={v}" for k, v in env.items())
                                                      if env else "")
             for p, env in specs]
    print(f"interleaved A/B, {args.rounds} rounds, "
          f"{'separate c' if args.separate_c else 'c is d'}; relative = time / {names[0]}'s time, same round")
    status = 0
    if args.shapes:
        shapes = []
        for spec in args.shapes.split(","):
            if spec == "seed":
                shapes.append(bench.make_shapes(False)[0])
                continue
            if spec == "large":
                shapes.extend(bench.make_shapes(False)[1:])
                continue
            try:
                shapes.append(bench.parse_shape(spec))
            except ValueError as e:
                parser.error(f"--shapes: {e}")
    else:
        shapes = bench.make_shapes(False)
    oracle = None
    try:
        from dgemm import _runtime
        props = torch.cuda.get_device_properties(0)
        max_smem = getattr(props, "shared_memory_per_block_optin", 0) or 232448
        bandwidth, calibration = bench.device_bandwidth_gbps(dgemm)
        print(f"device memory {bandwidth} GB/s peak; heuristics calibration {calibration}")
        oracle = bench.ConfigOracle(_runtime.load(), props.multi_processor_count, max_smem, None,
                                    bandwidth)
    except Exception as e:  # noqa: BLE001
        print(f"(no config lookup: {e})")
    for shape in shapes:
        g, m, n, ks = shape.g, shape.m, shape.n, shape.ks
        if len(set(ks)) > 1 and shape.label != "issue" and shape.label != "seed":
            print(f"   {shape.name()}: K per group {ks}")
        torch.manual_seed(0)
        xa = torch.randn(sum(ks), m, device="cuda", dtype=torch.bfloat16)
        xb = torch.randn(sum(ks), n, device="cuda", dtype=torch.bfloat16)
        a = dgemm.make_k_grouped_operand(xa, ks)
        b = dgemm.make_k_grouped_operand(xb, ks)
        del xa, xb
        kt = torch.tensor(ks, dtype=torch.int32, device="cuda")
        c = torch.randn(g, m, n, device="cuda", dtype=torch.float32)
        ds = [torch.full_like(c, float("nan")) for _ in args.bundles]

        # The configuration the runtime picks without any bundle's overrides.
        for var in override_vars:
            os.environ.pop(var, None)
        config = oracle.entry(m, n, ks, in_place=not args.separate_c) if oracle else "?"
        # The kernel each bundle's overrides lead to (the oracle reads the environment).
        if oracle is not None:
            for (path, env), name in zip(specs, names):
                if path is None or not env:
                    continue
                os.environ.update(env)
                print(f"   {name} -> {oracle.entry(m, n, ks, in_place=not args.separate_c)}")
                for var in env:
                    os.environ.pop(var, None)

        if peer is not None:
            code, desc = peer.config(ks, m, n)
            if code != 1:
                print(f"!! {shape.name()}: deepgemm has no kernel here ({desc}); shape skipped")
                status = 1
                continue
            config += f" | {desc}"
        stream = torch.cuda.current_stream().cuda_stream

        def call(i):
            path, env = specs[i]
            if path is None:
                peer.run(a, b, ds[i], kt, ks, m, n, stream)
                return
            os.environ["DGEMM_KERNEL_DIR"] = path
            for var in override_vars:
                if var in env:
                    os.environ[var] = env[var]
                else:
                    os.environ.pop(var, None)
            dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, ds[i], ks, kt,
                                                  c if args.separate_c else ds[i])

        host_us = 0.0
        try:
            for i in range(len(args.bundles)):   # warm-up, module load, and the bitwise check
                for w in range(3):
                    ds[i].copy_(c)
                    t0 = time.perf_counter()
                    call(i)
                    if w > 0:
                        host_us = max(host_us, (time.perf_counter() - t0) * 1e6)
            torch.cuda.synchronize()
        except RuntimeError as e:   # the runtime's and the DeepGEMM peer's errors
            print(f"!! {shape.name()}: {e}; shape skipped", flush=True)
            status = 1
            continue
        # The GPU sleeps well past the host's enqueue time of a call (measured above), so
        # the start event never waits on the host. (With a fixed ~100 us sleep, two device
        # calls timed the 51 us seed shape at 70-116 us for every bundle, which a host
        # slower than the sleep would explain; not verified.)
        sleep_cycles = int(max(200.0, 3.0 * host_us + 50.0) * cycles_per_us)
        for i in range(1, len(args.bundles)):
            if specs[i][0] is None or specs[0][0] is None:
                diff = dgemm.calc_diff(ds[i], ds[0])
                print(f"   {shape.name()}: {names[i]} vs {names[0]}: calc_diff {diff:.2e}"
                      + ("" if diff < bench.DIFF_LIMIT else " (WRONG)"))
                if not diff < bench.DIFF_LIMIT:
                    status = 1
            elif not torch.equal(ds[i], ds[0]):
                print(f"!! {shape.name()}: {names[i]} differs from {names[0]}")
                status = 1
        times = [[] for _ in args.bundles]
        nb = len(args.bundles)
        for r in range(args.rounds):
            # An untimed call first (the first call after the host synchronizes runs slower),
            # then every bundle once, starting from a different one each round.
            flush.zero_()
            call(r % nb)
            events = []
            for i in [(r + j) % nb for j in range(nb)]:
                flush.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                # The host enqueues the call while the GPU sleeps, so the start event does
                # not wait on the host.
                torch.cuda._sleep(sleep_cycles)
                s.record()
                call(i)
                e.record()
                events.append((i, s, e))
            torch.cuda.synchronize()
            for i, s, e in events:
                times[i].append(s.elapsed_time(e) * 1e3)
        cols = []
        for i, name in enumerate(names):
            med = statistics.median(times[i])
            rel = statistics.median(t / t0 for t, t0 in zip(times[i], times[0]))
            cols.append(f"{name} {med:8.1f} us {shape.flop / med / 1e6:5.0f} TF rel {rel:.3f}")
        print(f"{shape.name():24s} {config} | " + " | ".join(cols), flush=True)
        del a, b, c, ds
        torch.cuda.empty_cache()
    return status


if __name__ == "__main__":
    sys.exit(main())
