#!/usr/bin/env python3
"""Benchmark of dgemm's k-grouped FP8 1D1D wgrad GEMM against its peers, in one process.

    PYTHONPATH=python DGEMM_RUNTIME_LIB=<build>/libdgemm_runtime.so DGEMM_KERNEL_DIR=<bundle> \
        python3 bench/bench.py [--quick] [--no-peers] [--runs N] [--warmup N] [--md PATH]

What it does, per shape (the issue's six k-grouped shapes and the bug report's seed shape):

1. Fresh random data (seeded, so runs are comparable): token-major ``torch.randn`` bf16
   activations/gradients, cast with ``dgemm.make_k_grouped_operand`` (per-channel FP8, one
   scale per 128 tokens); ``c`` is a separate random FP32 ``[G, M, N]`` tensor, as in DeepGEMM's
   own k-grouped benchmark (so C is read and D written, like the reference figures).
2. One correctness call (d poisoned with NaN first), compared with
   ``dgemm.k_grouped_reference`` (float64) through ``dgemm.calc_diff``; it must be < 1e-3.
3. Timing with CUDA events: warm-up calls, then per timed run an L2 flush (a 256 MB buffer
   ``.zero_()``; ``--flush-mb`` sets its size), a short ``torch.cuda._sleep`` so the host
   enqueues the call before the GPU reaches the start event (the Python entry point's host
   overhead is then not timed), start event, the call, end event. The median is reported.
4. After timing, d and the results of 8 more calls must equal the first result bit for bit (the
   kernel has no split-K, so it is deterministic; a difference means a race such as the one the
   bug report was about).
5. DeepGEMM, when its peer library is given (``--deepgemm-peer LIB``, default
   ``$DGEMM_DEEPGEMM_PEER``; built by scripts/build_deepgemm_peer.sh from
   bench/peers/deepgemm_kgrouped.cu) and c is d: DeepGEMM's own SM90 k-grouped kernel on the
   same operands, in place on a copy of c, with the configuration its heuristics give. It runs
   after everything else, once our table, status and markdown are out: per shape the same data
   again and one call of ours; DeepGEMM's result is compared with that (calc_diff, and whether
   it is bitwise equal), 9 more calls of DeepGEMM with its own first result (bit for bit), and
   then it is timed the same way; the table is printed again. An error there never changes the
   exit code; a hang leaves the step's timeout to end the process, after our results are out.
6. Peer: ``torch._scaled_grouped_mm`` (FP8 e4m3, 2d x 2d ragged-K, per-group row-wise FP32
   scales, bf16 out), default and fast accumulation, timed the same way. It quantizes
   differently (row-wise per group, not per 128 tokens), so only its speed is compared.

Plus ``torch._scaled_mm`` FP8 8192^3 with per-tensor scales (bf16 out) as the dense ceiling.

The "config" column is the kernel entry the runtime's heuristics choose for the shape on this
device, read from the C++ function ``dgemm::runtime::chooseKGroupedConfig`` that
libdgemm_runtime.so exports (called through ctypes with the struct layouts of
heuristics/include/dgemm/Heuristics/KernelConfig.h); if that symbol is missing or
returns something implausible, the column says ``n/a``. ``DGEMM_BENCH_NO_CONFIG=1`` skips it.
The "regs, local, smem" column is what the driver compiled that kernel to
(``dgemm.kernel_info``, the C ABI's ``dgemm_k_grouped_kernel_info``): registers per thread at
launch (``setmaxnreg`` then moves them between the producer and the math warpgroups), local
memory per thread (spills and stack; the JIT log's spill bytes are printed per shape) and the
dynamic + static shared memory per CTA. ``DGEMM_BENCH_TRACEBACK=1`` prints the traceback of a
failure of our GEMM. ``DGEMM_RUNTIME_LIBRARY`` (what scripts/device_round.sh sets) is accepted
for ``DGEMM_RUNTIME_LIB``, and ``python/`` is put on ``sys.path`` when ``dgemm`` is not
importable otherwise.

Robustness: every failure (import, launch, peer, out of memory, CUDA error) is printed and the
run goes on. Exit code: 1 if any result of ours was wrong (calc_diff >= 1e-3, NaN, or not
bitwise stable across calls); else 2 if our GEMM could not run on some shape; else 0. Peer
failures never change the exit code. With ``BENCH_MD`` set (or ``--md``), the final table is
also written there as markdown.
"""

from __future__ import annotations

import argparse
import ctypes
import math
import os
import random
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent

# --- Figures from the issue --------------------------------------------------------------------
DENSE_CEILING_TFLOPS = 1475.0   # FP8 dense ceiling on the H200 (issue)
HBM_TBPS = 4.26                 # HBM bandwidth (issue)
# DeepGEMM 2.6.1 + drain on the H200: (groups, M, N) -> (sum K, TFLOPS).
REFERENCE = {
    (4, 4096, 7168): (34304, 1025.0),
    (4, 7168, 2048): (32896, 991.0),
    (8, 4096, 7168): (35968, 982.0),
    (8, 7168, 2048): (33920, 948.0),
    (16, 4096, 7168): (34432, 883.0),
    (16, 7168, 2048): (34304, 886.0),
}
SEED_KS = [256, 128, 128, 256]              # the bug report's shape: 4 groups, M = N = 2048
SEED_REFERENCE_TFLOPS, SEED_REFERENCE_US = 112.0, 57.0
EXPECTED_K = {4: 8192, 8: 4096, 16: 2048}   # expected K per group, by group count
BLOCK_K = 128
DIFF_LIMIT = 1e-3
STABILITY_CALLS = int(os.environ.get("BENCH_STABILITY_CALLS", "8"))            # extra calls compared bitwise with the first result
L2_FLUSH_BYTES = 256 * 1024 * 1024

# --- Output helpers ----------------------------------------------------------------------------


def log(msg: str = "") -> None:
    print(msg, flush=True)


def peer_calc_diff(x: Any, y: Any) -> float:
    """DeepGEMM's metric (as dgemm.calc_diff), kept here so peers are checked without dgemm."""
    x, y = x.double(), y.double()
    den = float((x * x + y * y).sum())
    return 0.0 if den == 0 else 1.0 - 2.0 * float((x * y).sum()) / den


def short_exc(e: BaseException, limit: int = 300) -> str:
    text = f"{type(e).__name__}: {e}".replace("\n", " ").strip()
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Shape:
    def __init__(self, label: str, m: int, n: int, ks: Sequence[int],
                 ref_tflops: Optional[float], ref_sum_k: Optional[int], seed_note: str):
        self.label, self.m, self.n, self.ks = label, m, n, list(ks)
        self.g = len(self.ks)
        self.sum_k = sum(self.ks)
        self.ref_tflops, self.ref_sum_k, self.seed_note = ref_tflops, ref_sum_k, seed_note

    @property
    def flop(self) -> float:
        return 2.0 * self.m * self.n * self.sum_k

    @property
    def min_bytes(self) -> int:
        """A, B (FP8), sfa, sfb (FP32, one per 128 K), C read and D written (FP32)."""
        operands = (self.m + self.n) * self.sum_k + 4 * (self.m + self.n) * (self.sum_k // BLOCK_K)
        return operands + 2 * 4 * self.g * self.m * self.n

    @property
    def floor_us(self) -> float:
        return max(self.flop / (DENSE_CEILING_TFLOPS * 1e12),
                   self.min_bytes / (HBM_TBPS * 1e12)) * 1e6

    def name(self) -> str:
        return f"({self.g}, {self.m}x{self.n}, {self.sum_k})"


class Row:
    def __init__(self, shape: Shape):
        self.shape = shape
        self.config = "n/a"
        self.diff: Optional[float] = None
        self.diff_note = ""
        self.ours_us: Optional[float] = None
        self.ours_note = ""
        self.stable: Optional[bool] = None
        self.peer_us: Optional[float] = None
        self.peer_note = ""
        self.peer_fast_us: Optional[float] = None
        self.peer_fast_note = ""
        self.dg_us: Optional[float] = None
        self.dg_note = ""
        self.resources = "n/a"


# --- Shapes ------------------------------------------------------------------------------------


def draw_ks(g: int, m: int, n: int, attempt: int) -> List[int]:
    """DeepGEMM's k-grouped draw: K_g = align_up(int(expected * U(0.7, 1.3)), 128)."""
    rng = random.Random(f"dgemm-bench:{g}:{m}:{n}:{attempt}")
    return drawn_ks(rng, g, EXPECTED_K[g])


def drawn_ks(rng: random.Random, g: int, expected_k: int) -> List[int]:
    """g draws of align_up(int(expected_k * U(0.7, 1.3)), 128) from `rng`."""
    return [-(-int(expected_k * rng.uniform(0.7, 1.3)) // BLOCK_K) * BLOCK_K for _ in range(g)]


def parse_shape(spec: str) -> Shape:
    """G:M:N:K, G:M:N:K1/K2/... or G:M:N:~K (bench/ab.py --shapes); ValueError names what is wrong."""
    fields = spec.split(":")
    if len(fields) != 4:
        raise ValueError(f"shape {spec!r}: expected G:M:N:K")
    try:
        g, m, n = (int(v) for v in fields[:3])
    except ValueError:
        raise ValueError(f"shape {spec!r}: G, M and N must be integers") from None
    if g < 1 or m < 1 or n < 1:
        raise ValueError(f"shape {spec!r}: G, M and N must be positive")
    k = fields[3]
    try:
        if k.startswith("~"):
            expected = int(k[1:])
            ks = drawn_ks(random.Random(f"dgemm-ab:{g}:{m}:{n}:{expected}"), g, expected)
            label = f"drawn ~{expected}"
        elif "/" in k:
            ks = [int(v) for v in k.split("/")]
            if len(ks) != g:
                raise ValueError(f"shape {spec!r}: {len(ks)} K values for G = {g} groups")
            label = "given ks"
        else:
            ks = [int(k)] * g
            label = "given"
    except ValueError as e:
        if str(e).startswith("shape "):
            raise
        raise ValueError(f"shape {spec!r}: K must be an integer, K1/K2/... or ~K") from None
    if any(v < 0 or v % BLOCK_K for v in ks):
        raise ValueError(f"shape {spec!r}: every K must be a non-negative multiple of "
                         f"{BLOCK_K}")
    if sum(ks) == 0:
        raise ValueError(f"shape {spec!r}: the groups' K sum to 0")
    return Shape(label, m, n, ks, None, None, "")


def make_shapes(quick: bool) -> List[Shape]:
    shapes = [Shape("seed", 2048, 2048, SEED_KS, SEED_REFERENCE_TFLOPS, sum(SEED_KS),
                    "bug report's ks")]
    for (g, m, n), (ref_sum_k, ref_tf) in REFERENCE.items():
        # Fixed string seeds; the first attempt whose sum equals the sum K is used, so
        # the FLOP count equals the reference figure's (each K is still one U(0.7, 1.3) draw).
        chosen, note = None, ""
        for attempt in range(100000):
            ks = draw_ks(g, m, n, attempt)
            if sum(ks) == ref_sum_k:
                chosen, note = ks, f"seed attempt {attempt}, sum K = issue's"
                break
        if chosen is None:
            chosen, note = draw_ks(g, m, n, 0), "seed attempt 0, sum K differs from issue's"
        shapes.append(Shape("issue", m, n, chosen, ref_tf, ref_sum_k, note))
    if os.environ.get("BENCH_SHAPES"):   # e.g. "0,6": indices into the list above
        shapes = [shapes[int(i)] for i in os.environ["BENCH_SHAPES"].split(",")]
    elif quick:
        shapes = [shapes[0], shapes[1]]   # the seed shape and (4, 4096x7168)
    return shapes


# --- Environment -------------------------------------------------------------------------------


def setup_import_path() -> None:
    # scripts/device_round.sh passes the library as DGEMM_RUNTIME_LIBRARY; the package reads
    # DGEMM_RUNTIME_LIB. Accept both.
    if not os.environ.get("DGEMM_RUNTIME_LIB") and os.environ.get("DGEMM_RUNTIME_LIBRARY"):
        os.environ["DGEMM_RUNTIME_LIB"] = os.environ["DGEMM_RUNTIME_LIBRARY"]
    try:
        import dgemm  # noqa: F401
    except ImportError:
        sys.path.insert(0, str(REPO / "python"))


def nvidia_smi(fields: str) -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader", "-i", "0"],
            capture_output=True, text=True, timeout=15)
        text = (out.stdout or out.stderr).strip()
        return text if out.returncode == 0 else f"n/a ({text[:200]})"
    except Exception as e:  # noqa: BLE001
        return f"n/a ({short_exc(e)})"


def clocks_line() -> str:
    base = nvidia_smi("clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu")
    reasons = nvidia_smi("clocks_event_reasons.active")
    if reasons.startswith("n/a"):
        reasons = nvidia_smi("clocks_throttle_reasons.active")
    return f"sm, max sm, mem clock, power, limit, temp = {base}; clock event reasons = {reasons}"


def bundle_index(kernel_dir: Optional[str]) -> Optional[List[str]]:
    if not kernel_dir:
        return None
    try:
        lines = (Path(kernel_dir) / "index.txt").read_text().splitlines()
        lines = [ln.split("#")[0].strip() for ln in lines if ln.split("#")[0].strip()]
        # Format 2 (docs/KernelABI.md): "kernel=<entry> meta=... ptx=... cubin=..." lines
        # among key=value ones; format 1: the entries alone.
        if any(ln.startswith("format=") for ln in lines):
            return [ln[len("kernel="):].split()[0] for ln in lines if ln.startswith("kernel=")]
        return lines
    except Exception:  # noqa: BLE001
        return None


# --- The runtime's choice, through the exported C++ symbol -------------------------------------

# dgemm::runtime::chooseKGroupedConfig(int64_t m, int64_t n, int numGroups, const int32_t *ks,
# const heuristics::Target &, bool inPlace): the heuristics' choice with the runtime's
# environment overrides (DGEMM_BLOCK_N, DGEMM_STAGES, DGEMM_EPILOGUE, ...) applied, read once
# per process, so the column names the kernel the launch will use.
_SELECT_SYMBOL = "_ZN5dgemm7runtime20chooseKGroupedConfigElliPKiRKNS_10heuristics6TargetEb"


class _Target(ctypes.Structure):
    # heuristics::Target, field by field.
    _fields_ = [("numSMs", ctypes.c_int), ("maxSmemPerBlock", ctypes.c_int),
                ("memoryBandwidthGBps", ctypes.c_int)]


class _Config(ctypes.Structure):
    # heuristics::KernelConfig, field by field (kind: heuristics::Kind and epilogue:
    # heuristics::Epilogue, ints; unsafe: a set of heuristics::Unsafe bits).
    _fields_ = [(f, ctypes.c_int) for f in (
        "kind", "blockM", "blockN", "blockK", "stages", "descSlots", "mathWarpgroups",
        "clusterM", "clusterN", "swizzleA", "swizzleB", "numSMs", "epilogue",
        "redMaxBlocks", "quadB")] + [("unsafe", ctypes.c_uint)]


# heuristics::Kind of the k-grouped kernel (the only kind this benchmark runs).
_KIND_K_GROUPED = 3

# heuristics::Epilogue values.
_EPILOGUE_REDUCTION, _EPILOGUE_IN_PLACE, _EPILOGUE_PARKED = 1, 2, 3


def entry_name(c: Any) -> str:
    """heuristics::KernelConfig::entryName."""
    name = f"dgemm_kgrouped_fp8_1d1d_bm{c.blockM}_bn{c.blockN}_s{c.stages}_r{c.descSlots}"
    if c.clusterM != 1 or c.clusterN != 1:
        name += f"_c{c.clusterM}x{c.clusterN}"
    if c.redMaxBlocks > 0:
        name += f"_red{c.redMaxBlocks}"
    if c.epilogue in (_EPILOGUE_IN_PLACE, _EPILOGUE_PARKED):
        name += "_ip"
    if c.quadB:
        name += "_q"
    if c.epilogue == _EPILOGUE_PARKED:
        name += "_park"
    if c.unsafe & 1:
        name += "_unsafe_nodrain"
    if c.unsafe & 2:
        name += "_unsafe_nofence"
    return name


def device_bandwidth_gbps(dgemm_module: Any) -> Tuple[int, str]:
    """The peak memory bandwidth (GB/s) and heuristics calibration the runtime sees on the
    current device, from ``dgemm.kernel_info`` on a one-tile problem; (0, reason) when it
    cannot tell."""
    try:
        info = dgemm_module.kernel_info(128, 128, [128], in_place=False)
        return int(info["memory_bandwidth_gbps"]), str(info["calibration"])
    except Exception as e:  # noqa: BLE001
        return 0, f"unknown ({short_exc(e, 60)})"


class ConfigOracle:
    def __init__(self, lib: Any, num_sms: int, max_smem: int, index: Optional[List[str]],
                 bandwidth_gbps: int = 0):
        """bandwidth_gbps: the device's peak memory bandwidth (device_bandwidth_gbps), which
        selects the heuristics' calibration; 0 (unknown) takes the H100's."""
        self.fn = None
        self.why = ""
        self.target = _Target(num_sms, max_smem, bandwidth_gbps)
        self.index = index
        if os.environ.get("DGEMM_BENCH_NO_CONFIG") == "1":
            self.why = "DGEMM_BENCH_NO_CONFIG=1"
            return
        try:
            fn = getattr(lib, _SELECT_SYMBOL)
            fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int,
                           ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(_Target), ctypes.c_bool]
            fn.restype = _Config
            self.fn = fn
        except AttributeError:
            self.why = "runtime exports no config-selection function"

    def entry(self, m: int, n: int, ks: Sequence[int], in_place: bool = False) -> str:
        if self.fn is None:
            return f"n/a ({self.why})" if self.why else "n/a"
        arr = (ctypes.c_int32 * len(ks))(*ks)
        c = self.fn(m, n, len(ks), arr, ctypes.byref(self.target), in_place)
        if c.blockM == 0:  # the runtime's sign of a failed choice
            return "n/a (the runtime refused the DGEMM_* overrides)"
        plausible = (c.kind == _KIND_K_GROUPED and c.blockM in (64, 128, 192) and c.blockK == BLOCK_K and 8 <= c.blockN <= 256
                     and c.blockN % 8 == 0 and 1 <= c.stages <= 64 and 1 <= c.descSlots <= 64
                     and 1 <= c.clusterM <= 8 and 1 <= c.clusterN <= 8
                     and 0 <= c.redMaxBlocks <= 1 << 20 and 0 <= c.epilogue <= 3
                     and c.quadB in (0, 1) and c.unsafe <= 3)
        if not plausible:
            return "n/a (implausible config from runtime)"
        name = entry_name(c)
        if self.index is not None and name not in self.index:
            name += " (NOT in bundle index)"
        return name


# --- DeepGEMM peer ----------------------------------------------------------------------------


class DeepGemmPeer:
    """ctypes over the C ABI of bench/peers/deepgemm_kgrouped.cu."""

    def __init__(self, path: str):
        self.path = path
        lib = ctypes.CDLL(path)
        lib.dgpeer_kgrouped_config.restype = ctypes.c_int
        lib.dgpeer_kgrouped_config.argtypes = [
            ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_char_p, ctypes.c_size_t]
        lib.dgpeer_kgrouped_run.restype = ctypes.c_int
        lib.dgpeer_kgrouped_run.argtypes = [ctypes.c_void_p] * 6 + [
            ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int, ctypes.c_int,
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        self.lib = lib

    @staticmethod
    def _ks(ks: Sequence[int]) -> Any:
        return (ctypes.c_int * len(ks))(*ks)

    def config(self, ks: Sequence[int], m: int, n: int, sms: int = 0) -> Tuple[int, str]:
        """(1: a kernel exists, 0: none for this config, -1: error; the description)."""
        buf = ctypes.create_string_buffer(512)
        code = self.lib.dgpeer_kgrouped_config(self._ks(ks), len(ks), m, n, sms, buf, 512)
        return code, buf.value.decode(errors="replace")

    def run(self, a: Any, b: Any, d: Any, ks_tensor: Any, ks: Sequence[int], m: int, n: int,
            stream: int) -> None:
        (a_fp8, sfa), (b_fp8, sfb) = a, b
        for name, sf, mn in (("sfa", sfa, m), ("sfb", sfb, n)):
            if tuple(sf.stride()) != (1, mn):
                raise ValueError(f"{name} strides {tuple(sf.stride())}, expected (1, {mn})")
        buf = ctypes.create_string_buffer(512)
        code = self.lib.dgpeer_kgrouped_run(
            a_fp8.data_ptr(), sfa.data_ptr(), b_fp8.data_ptr(), sfb.data_ptr(), d.data_ptr(),
            ks_tensor.data_ptr(), self._ks(ks), len(ks), m, n, stream, buf, 512)
        if code != 0:
            raise RuntimeError(buf.value.decode(errors="replace"))


def default_deepgemm_peer() -> Optional[str]:
    path = os.environ.get("DGEMM_DEEPGEMM_PEER")
    if path:
        return path
    built = REPO / "build-peer" / "libdgemm_deepgemm_peer.so"
    return str(built) if built.exists() else None


# --- Timing ------------------------------------------------------------------------------------


class Timer:
    def __init__(self, torch: Any, runs: int, warmup: int, flush_bytes: int = L2_FLUSH_BYTES):
        self.torch = torch
        self.runs, self.warmup = runs, warmup
        self.flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
        props = torch.cuda.get_device_properties(0)
        khz = getattr(props, "clock_rate", 0) or 1980000   # SM clock in kHz
        self.cycles_per_us = khz / 1000.0
        self.has_sleep = hasattr(torch.cuda, "_sleep")

    def time_us(self, fn: Callable[[], Any]) -> Tuple[float, float, float]:
        """(median, min, max) in microseconds over `runs` timed calls."""
        torch = self.torch
        host_us = 0.0
        for i in range(self.warmup):
            t0 = time.perf_counter()
            fn()
            if i > 0:
                host_us = max(host_us, (time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
        # Give the host a head start: the GPU sleeps longer than the host needs to enqueue the
        # call, so the start event never waits on the host.
        sleep_cycles = int(max(20.0, 2.0 * host_us + 20.0) * self.cycles_per_us)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(self.runs)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(self.runs)]
        for i in range(self.runs):
            self.flush.zero_()
            if self.has_sleep:
                torch.cuda._sleep(sleep_cycles)
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize()
        times = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
        return statistics.median(times), min(times), max(times)


# --- The benchmark -----------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.torch: Any = None
        self.dgemm: Any = None
        self.dgemm_error = ""
        self.timer: Optional[Timer] = None
        self.oracle: Optional[ConfigOracle] = None
        self.dg_peer: Optional[DeepGemmPeer] = None
        self.dg_missing = ""
        self.cuda_dead = ""
        self.wrong: List[str] = []
        self.ours_failed: List[str] = []
        self.header: List[str] = []
        self.dense: List[Tuple[str, Optional[float], str]] = []

    # -- helpers

    def note(self, line: str) -> None:
        self.header.append(line)
        log(line)

    def cuda_alive(self) -> bool:
        """False once the CUDA context is unusable (a sticky error); later steps are skipped."""
        if self.cuda_dead:
            return False
        try:
            self.torch.cuda.synchronize()
            return True
        except Exception as e:  # noqa: BLE001
            self.cuda_dead = short_exc(e)
            log(f"!! CUDA context unusable, skipping all later GPU work: {self.cuda_dead}")
            return False

    def after_failure(self) -> None:
        self.cuda_alive()
        try:
            self.torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            pass

    # -- setup

    def setup(self) -> bool:
        try:
            import torch
        except Exception as e:  # noqa: BLE001
            log(f"!! cannot import torch: {short_exc(e)}")
            return False
        self.torch = torch
        self.note(f"torch {torch.__version__} (CUDA {torch.version.cuda}), "
                  f"python {sys.version.split()[0]}")
        if not torch.cuda.is_available():
            log("!! torch.cuda.is_available() is False: nothing to benchmark")
            return False
        props = torch.cuda.get_device_properties(0)
        max_smem = getattr(props, "shared_memory_per_block_optin", 0) or 232448
        self.note(f"GPU: {props.name}, sm_{props.major}{props.minor}, "
                  f"{props.multi_processor_count} SMs, "
                  f"{props.total_memory / 2**30:.0f} GiB, L2 {getattr(props, 'L2_cache_size', 0) / 2**20:.0f} MiB, "
                  f"opt-in smem/block {max_smem}")
        self.note("clocks (not locked by this script; boost varies with power and temperature, "
                  "so compare medians of runs made close together): " + clocks_line())
        try:
            import dgemm
            from dgemm import _runtime
            lib = _runtime.load()
            self.dgemm = dgemm
            self.note(f"dgemm {dgemm.__version__} from {Path(dgemm.__file__).parent}; runtime "
                      f"{dgemm.runtime_version()} from {_runtime.loaded_path()}")
            kernel_dir = os.environ.get("DGEMM_KERNEL_DIR")
            index = bundle_index(kernel_dir)
            self.note(f"kernel bundle: DGEMM_KERNEL_DIR={kernel_dir or '(unset: runtime default)'}"
                      + (f", {len(index)} entries in index.txt" if index is not None else
                         ", no readable index.txt"))
            bandwidth, calibration = device_bandwidth_gbps(dgemm)
            self.note(f"device memory: {bandwidth} GB/s peak (driver: memory clock x bus width); "
                      f"heuristics calibration: {calibration}")
            try:
                self.oracle = ConfigOracle(lib, props.multi_processor_count, max_smem, index,
                                           bandwidth)
            except Exception as e:  # noqa: BLE001
                log(f"!! config lookup unavailable: {short_exc(e)}")
        except Exception as e:  # noqa: BLE001
            self.dgemm_error = short_exc(e)
            log(f"!! dgemm unavailable, only the peers will run: {self.dgemm_error}")
        self.dg_missing = "not given (--deepgemm-peer)"
        if self.args.no_peers:
            self.dg_missing = "skipped (--no-peers)"
        elif self.args.separate_c and self.args.deepgemm_peer:
            self.dg_missing = "in place only (drop --separate-c)"
        elif self.args.deepgemm_peer:
            try:
                self.dg_peer = DeepGemmPeer(self.args.deepgemm_peer)
                self.note(f"DeepGEMM peer: {self.args.deepgemm_peer} (DeepGEMM's SM90 k-grouped "
                          f"1D1D kernel, configured by its heuristics)")
            except Exception as e:  # noqa: BLE001
                self.dg_missing = f"library did not load: {short_exc(e, 80)}"
        if self.dg_peer is None:
            self.note(f"DeepGEMM peer: {self.dg_missing}")
        try:
            self.timer = Timer(torch, self.args.runs, self.args.warmup,
                               self.args.flush_mb << 20)
        except Exception as e:  # noqa: BLE001
            log(f"!! cannot allocate the L2 flush buffer: {short_exc(e)}")
            return False
        self.note(f"timing: CUDA events, L2 flushed ({self.args.flush_mb} MB zero_) before "
                  f"each run, {self.args.warmup} warm-up + {self.args.runs} timed runs, median"
                  + ("" if self.timer.has_sleep else " (no torch.cuda._sleep: host overhead "
                     "may be included)"))
        return True

    def timed(self, label: str, shape: Shape, fn: Callable[[], Any]) -> float:
        """The median time of `fn` in us, logged with its range and TFLOPS."""
        med, lo, hi = self.timer.time_us(fn)
        log(f"   {label}: median {med:.1f} us (min {lo:.1f}, max {hi:.1f}), "
            f"{shape.flop / med / 1e6:.0f} TFLOPS")
        return med

    # -- one shape

    def run_shape(self, shape: Shape) -> Row:
        torch = self.torch
        row = Row(shape)
        log()
        log(f"== {shape.name()} ks={shape.ks} ({shape.seed_note})")
        if self.oracle is not None:
            try:
                row.config = self.oracle.entry(shape.m, shape.n, shape.ks,
                                                in_place=not self.args.separate_c)
            except Exception as e:  # noqa: BLE001
                row.config = f"n/a ({short_exc(e, 80)})"
        elif self.dgemm_error:
            row.config = "n/a (dgemm unavailable)"
        log(f"   config: {row.config}")
        if not self.cuda_alive():
            row.ours_note = row.peer_note = row.peer_fast_note = f"skipped ({self.cuda_dead})"
            if self.dgemm is not None:
                self.ours_failed.append(shape.name())
            return row

        if self.dgemm is not None:
            try:
                ki = self.dgemm.kernel_info(shape.m, shape.n, shape.ks,
                                            in_place=not self.args.separate_c)
                row.resources = (f"{ki['registers']}, {ki['local_bytes']} B, "
                                 f"{ki['dynamic_smem_bytes'] + ki['static_smem_bytes']} B")
                spills = ("not in the JIT log" if ki["spill_store_bytes"] < 0 else
                          f"{ki['spill_store_bytes']} B stores, {ki['spill_load_bytes']} B loads")
                log(f"   kernel: {ki['entry']}, {ki['threads']} threads x {ki['grid_x']} CTAs; "
                    f"{ki['registers']} registers/thread at launch; local memory "
                    f"{ki['local_bytes']} B/thread; spills {spills}; shared memory "
                    f"{ki['dynamic_smem_bytes']} B dynamic + {ki['static_smem_bytes']} B static")
                if not row.config.startswith("n/a") and row.config.split()[0] != ki["entry"]:
                    log(f"!! kernel_info names {ki['entry']}, the config lookup {row.config}")
            except Exception as e:  # noqa: BLE001
                row.resources = f"n/a ({short_exc(e, 60)})"
                log(f"   kernel: {row.resources}")

        g, m, n, ks = shape.g, shape.m, shape.n, shape.ks
        # Fresh data per shape, reproducible across runs.
        torch.manual_seed(1000003 * g + 1009 * m + n)
        x_a = x_b = None
        try:
            x_a = torch.randn(shape.sum_k, m, dtype=torch.bfloat16, device="cuda")
            x_b = torch.randn(shape.sum_k, n, dtype=torch.bfloat16, device="cuda")
        except Exception as e:  # noqa: BLE001
            msg = f"data generation failed: {short_exc(e)}"
            log(f"!! {msg}")
            row.ours_note = row.peer_note = row.peer_fast_note = msg
            if self.dgemm is not None:
                self.ours_failed.append(shape.name())
            self.after_failure()
            return row

        if self.dgemm is not None:
            self.run_ours(shape, row, x_a, x_b)
        else:
            row.ours_note = f"n/a (dgemm unavailable: {self.dgemm_error[:80]})"
            self.ours_failed.append(shape.name())
        if self.args.no_peers:
            row.peer_note = row.peer_fast_note = "skipped (--no-peers)"
        else:
            self.run_peer(shape, row, x_a, x_b)
        del x_a, x_b
        try:
            torch.cuda.empty_cache()
        except Exception:  # noqa: BLE001
            pass
        return row

    def run_ours(self, shape: Shape, row: Row, x_a: Any, x_b: Any) -> None:
        torch, dgemm = self.torch, self.dgemm
        g, m, n, ks = shape.g, shape.m, shape.n, shape.ks
        a = b = c = d = ks_tensor = first = None
        stage = "operand preparation"
        try:
            a = dgemm.make_k_grouped_operand(x_a, ks)
            b = dgemm.make_k_grouped_operand(x_b, ks)
            ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
            c = torch.randn(g, m, n, dtype=torch.float32, device="cuda")
            d = torch.full((g, m, n), float("nan"), dtype=torch.float32, device="cuda")
            # In place (the default, DeepGEMM's usage): d starts as a copy of c and the
            # kernel adds into it (TMA reduce-add). --separate-c: d = c + sum, c untouched.
            c_arg = c if self.args.separate_c else d

            def reset() -> None:
                if not self.args.separate_c:
                    d.copy_(c)

            def call() -> None:
                dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, c_arg)

            stage = "correctness call"
            reset()
            call()
            torch.cuda.synchronize()
            stage = "reference"
            ref = dgemm.k_grouped_reference(a, b, ks, m, n, c=c)
            row.diff = dgemm.calc_diff(d, ref)
            del ref
            ok = row.diff == row.diff and row.diff < DIFF_LIMIT   # NaN fails
            log(f"   correctness: calc_diff = {row.diff:.3e} (limit {DIFF_LIMIT:g}) "
                f"{'ok' if ok else 'WRONG'}")
            if not ok:
                row.diff_note = "WRONG"
                self.wrong.append(f"{shape.name()}: calc_diff {row.diff:.3e}")
            first = d.clone()

            stage = "timing"
            row.ours_us = self.timed("ours", shape, call)

            stage = "stability check"
            # 1 + STABILITY_CALLS more calls from the same starting d, each compared bit for
            # bit with the first result.
            first_bits = first.view(torch.int32)
            differing, worst = 0, 0.0
            for _ in range(1 + STABILITY_CALLS):
                reset()
                call()
                if not torch.equal(d.view(torch.int32), first_bits):
                    differing += 1
                    worst = max(worst, dgemm.calc_diff(d, first))
            row.stable = differing == 0
            if not row.stable:
                log(f"   NOT bitwise stable: {differing} of {1 + STABILITY_CALLS} checked calls "
                    f"differ from the first (worst calc_diff vs first {worst:.3e})")
                self.wrong.append(f"{shape.name()}: result changed between calls "
                                  f"({differing}/{1 + STABILITY_CALLS})")
            else:
                log(f"   bitwise stable: {1 + STABILITY_CALLS} more calls equal the first")
            if self.dg_peer is None:
                row.dg_note = self.dg_missing
        except Exception as e:  # noqa: BLE001
            msg = f"{stage} failed: {short_exc(e)}"
            log(f"!! ours: {msg}")
            if os.environ.get("DGEMM_BENCH_TRACEBACK") == "1":
                traceback.print_exc()
            row.ours_note = msg
            if row.ours_us is None:
                self.ours_failed.append(shape.name())
            self.after_failure()
        finally:
            del a, b, c, d, ks_tensor, first

    def deepgemm_pass(self, shape: Shape, row: Row) -> None:
        """DeepGEMM's column for one shape, after every other measurement (a kernel that is
        not ours cannot cost us the rest of the run). The shape's data again (same seeds as
        run_shape and run_ours), one call of ours for the comparison, then DeepGEMM."""
        torch, dgemm = self.torch, self.dgemm
        if dgemm is None or not self.cuda_alive():
            row.dg_note = "skipped (needs dgemm and a live CUDA context)"
            return
        g, m, n, ks = shape.g, shape.m, shape.n, shape.ks
        log(f"== DeepGEMM on {shape.name()}")
        x_a = x_b = a = b = c = d = ks_tensor = None
        try:
            torch.manual_seed(1000003 * g + 1009 * m + n)
            x_a = torch.randn(shape.sum_k, m, dtype=torch.bfloat16, device="cuda")
            x_b = torch.randn(shape.sum_k, n, dtype=torch.bfloat16, device="cuda")
            a = dgemm.make_k_grouped_operand(x_a, ks)
            b = dgemm.make_k_grouped_operand(x_b, ks)
            del x_a, x_b
            x_a = x_b = None
            ks_tensor = torch.tensor(ks, dtype=torch.int32, device="cuda")
            c = torch.randn(g, m, n, dtype=torch.float32, device="cuda")
            d = c.clone()
            dgemm.k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, d)
            torch.cuda.synchronize()
            self.run_deepgemm(shape, row, a, b, ks_tensor, c, d)
        except Exception as e:  # noqa: BLE001
            row.dg_note = f"n/a (setup: {short_exc(e, 160)})"
            log(f"   DeepGEMM: {row.dg_note}")
            self.after_failure()
        finally:
            del x_a, x_b, a, b, c, d, ks_tensor
            try:
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001
                pass

    def run_deepgemm(self, shape: Shape, row: Row, a: Any, b: Any, ks_tensor: Any, c: Any,
                     ours: Any) -> None:
        """DeepGEMM's kernel on our operands, in place on a copy of c; compared with `ours`
        (our result for the same data, which run_ours checked against the float64
        reference), then timed."""
        torch, dgemm = self.torch, self.dgemm
        g, m, n, ks = shape.g, shape.m, shape.n, shape.ks
        d = first = None
        stage = "configuration"
        try:
            code, desc = self.dg_peer.config(ks, m, n)
            log(f"   DeepGEMM: {desc}")
            if code != 1:
                row.dg_note = "no kernel for its config" if code == 0 else f"n/a ({desc})"
                return
            stream = torch.cuda.current_stream().cuda_stream
            d = c.clone()

            def call() -> None:
                self.dg_peer.run(a, b, d, ks_tensor, ks, m, n, stream)

            stage = "first call"
            call()
            torch.cuda.synchronize()
            diff = dgemm.calc_diff(d, ours)
            same = torch.equal(d.view(torch.int32), ours.view(torch.int32))
            first = d.clone()
            differing = 0
            for _ in range(1 + STABILITY_CALLS):
                d.copy_(c)
                call()
                if not torch.equal(d.view(torch.int32), first.view(torch.int32)):
                    differing += 1
            ok = diff == diff and diff < DIFF_LIMIT
            log(f"   DeepGEMM: calc_diff vs ours {diff:.3e} ({'bitwise equal' if same else 'not bitwise equal'}"
                f"), {differing} of {1 + STABILITY_CALLS} more calls differ from its first"
                + ("" if ok else " (WRONG: its time is not a valid comparison)"))
            notes = []
            if not ok:
                notes.append(f"WRONG {diff:.1e}")
            if differing:
                notes.append(f"unstable {differing}/{1 + STABILITY_CALLS}")
            row.dg_note = ", ".join(notes)
            stage = "timing"
            row.dg_us = self.timed("DeepGEMM", shape, call)
        except Exception as e:  # noqa: BLE001
            row.dg_note = f"n/a ({stage}: {short_exc(e, 160)})"
            log(f"   DeepGEMM: {row.dg_note}")
            self.after_failure()
        finally:
            del d, first

    def run_peer(self, shape: Shape, row: Row, x_a: Any, x_b: Any) -> None:
        torch = self.torch
        if not self.cuda_alive():
            row.peer_note = row.peer_fast_note = f"skipped ({self.cuda_dead})"
            return
        fn_peer = getattr(torch, "_scaled_grouped_mm", None)
        if fn_peer is None:
            row.peer_note = row.peer_fast_note = "n/a (torch has no _scaled_grouped_mm)"
            log(f"   peer: {row.peer_note}")
            return
        g, m, n, ks = shape.g, shape.m, shape.n, shape.ks
        a_p = b_p = sa = sb = offs = out = None
        stage = "data"
        try:
            # 2d x 2d ragged K: mat_a (M, sum K) row-major, mat_b (sum K, N) column-major,
            # offs = end offset of each group along K, row-wise scales of length G*M and G*N.
            # randn values fit e4m3 directly; unit scales (only the speed is compared).
            a_p = x_a.t().contiguous().to(torch.float8_e4m3fn)
            b_p = x_b.t().contiguous().to(torch.float8_e4m3fn)     # (N, sum K)
            sa = torch.ones(g * m, dtype=torch.float32, device="cuda")
            sb = torch.ones(g * n, dtype=torch.float32, device="cuda")
            ends, acc = [], 0
            for k in ks:
                acc += k
                ends.append(acc)
            offs = torch.tensor(ends, dtype=torch.int32, device="cuda")
            stage = "first call"
            out = fn_peer(a_p, b_p.t(), sa, sb, offs=offs, out_dtype=torch.bfloat16)
            torch.cuda.synchronize()
            # Sanity: group 0 against an FP32 product of the same FP8 values (informative).
            sane = True
            try:
                k0 = ks[0]
                ref0 = a_p[:, :k0].float() @ b_p[:, :k0].float().t()
                pdiff = peer_calc_diff(out[0], ref0)
                del ref0
                sane = pdiff == pdiff and pdiff < 1e-2
                log(f"   peer _scaled_grouped_mm runs; output {tuple(out.shape)}, group-0 "
                    f"calc_diff vs FP32 = {pdiff:.2e}"
                    + ("" if sane else " (LOOKS WRONG: its time is not a valid comparison)"))
            except Exception as e:  # noqa: BLE001
                sane = False
                log(f"   peer _scaled_grouped_mm runs, but its check failed: {short_exc(e)}")
            out = None
            stage = "timing"
            row.peer_us = self.timed(
                "peer", shape,
                lambda: fn_peer(a_p, b_p.t(), sa, sb, offs=offs, out_dtype=torch.bfloat16))
            if not sane:
                row.peer_note = "result unchecked or wrong"
        except Exception as e:  # noqa: BLE001
            row.peer_note = row.peer_fast_note = f"n/a ({stage}: {short_exc(e, 160)})"
            log(f"   peer _scaled_grouped_mm: {row.peer_note}")
            self.after_failure()
            del a_p, b_p, sa, sb, offs, out
            return
        try:
            row.peer_fast_us = self.timed(
                "peer (use_fast_accum=True)", shape,
                lambda: fn_peer(a_p, b_p.t(), sa, sb, offs=offs, out_dtype=torch.bfloat16,
                                use_fast_accum=True))
        except Exception as e:  # noqa: BLE001
            row.peer_fast_note = f"n/a ({short_exc(e, 160)})"
            log(f"   peer fast accum: {row.peer_fast_note}")
            self.after_failure()
        del a_p, b_p, sa, sb, offs, out

    # -- dense ceiling

    def run_dense(self) -> None:
        torch = self.torch
        size = 8192
        flop = 2.0 * size ** 3
        log()
        log(f"== dense ceiling: torch._scaled_mm FP8 e4m3 {size}^3, per-tensor scales, bf16 out")
        if not self.cuda_alive():
            self.dense.append(("torch._scaled_mm", None, f"skipped ({self.cuda_dead})"))
            return
        a = b = s = None
        try:
            torch.manual_seed(8192)
            a = torch.randn(size, size, dtype=torch.bfloat16, device="cuda").to(torch.float8_e4m3fn)
            b = torch.randn(size, size, dtype=torch.bfloat16, device="cuda").to(torch.float8_e4m3fn)
            s = torch.ones((), dtype=torch.float32, device="cuda")
        except Exception as e:  # noqa: BLE001
            self.dense.append(("torch._scaled_mm", None, f"n/a (data: {short_exc(e, 160)})"))
            self.after_failure()
            return
        for label, fast in (("torch._scaled_mm", False), ("torch._scaled_mm fast accum", True)):
            try:
                med, lo, hi = self.timer.time_us(
                    lambda: torch._scaled_mm(a, b.t(), scale_a=s, scale_b=s,
                                             out_dtype=torch.bfloat16, use_fast_accum=fast))
                tf = flop / med / 1e6
                self.dense.append((label, tf, f"{med:.1f} us"))
                log(f"   {label}: median {med:.1f} us (min {lo:.1f}, max {hi:.1f}), {tf:.0f} TFLOPS")
            except Exception as e:  # noqa: BLE001
                self.dense.append((label, None, f"n/a ({short_exc(e, 160)})"))
                log(f"   {label}: n/a ({short_exc(e)})")
                self.after_failure()
        del a, b, s


# --- Table -------------------------------------------------------------------------------------

COLUMNS = ["shape (G, MxN, sum K)", "config", "regs, local, smem", "calc_diff", "ours us",
           "ours TFLOPS",
           "DeepGEMM TFLOPS (issue)", "ours/DeepGEMM (issue)", "DeepGEMM TFLOPS (this run)",
           "ours/DeepGEMM (this run)", "peer TFLOPS", "ours/peer",
           "peer fast TFLOPS", "floor us", "floor/ours"]


def clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def fmt_row(row: Row) -> List[str]:
    """One table row; long failure notes are clipped here (the log has them in full)."""
    s = row.shape
    tf = (s.flop / row.ours_us / 1e6) if row.ours_us else None

    def tflops(us: Optional[float], note: str) -> str:
        if us:
            return f"{s.flop / us / 1e6:.0f}" + (f" ({clip(note)})" if note else "")
        return clip(note) or "n/a"

    diff = "n/a" if row.diff is None else f"{row.diff:.2e}"
    if row.diff_note:
        diff += f" {row.diff_note}"
    if row.stable is False:
        diff += " UNSTABLE"
    ours_us = f"{row.ours_us:.1f}" if row.ours_us else (clip(row.ours_note) or "n/a")
    ref = "n/a"
    if s.ref_tflops:
        ref = f"{s.ref_tflops:.0f}"
        if s.ref_sum_k != s.sum_k:
            ref += f" (sum K {s.ref_sum_k})"
    vs_ref = f"{tf / s.ref_tflops:.2f}" if tf and s.ref_tflops else "n/a"
    peer_tf = (s.flop / row.peer_us / 1e6) if row.peer_us else None
    vs_peer = f"{tf / peer_tf:.2f}" if tf and peer_tf else "n/a"
    eff = f"{s.floor_us / row.ours_us:.2f}" if row.ours_us else "n/a"
    dg_tf = (s.flop / row.dg_us / 1e6) if row.dg_us else None
    vs_dg = f"{tf / dg_tf:.2f}" if tf and dg_tf else "n/a"
    return [s.name(), clip(row.config, 80), clip(row.resources), diff, ours_us,
            f"{tf:.0f}" if tf else "n/a", ref, vs_ref, tflops(row.dg_us, row.dg_note), vs_dg,
            tflops(row.peer_us, row.peer_note), vs_peer,
            tflops(row.peer_fast_us, row.peer_fast_note), f"{s.floor_us:.1f}", eff]


def text_table(rows: List[List[str]]) -> str:
    widths = [max(len(COLUMNS[i]), *(len(r[i]) for r in rows)) if rows else len(COLUMNS[i])
              for i in range(len(COLUMNS))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(COLUMNS, widths)),
             "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def md_table(rows: List[List[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(lines)


LEGEND = (
    "DeepGEMM TFLOPS (issue): DeepGEMM 2.6.1 + drain on an H200, from the issue (seed: 112 "
    "TFLOPS, 57 us). DeepGEMM TFLOPS (this run): DeepGEMM's SM90 k-grouped kernel as shipped "
    "in sgl-kernel 0.3.21 (no descriptor drain), timed here on the same operands; 'unstable' "
    "means its result changed between identical calls. peer: torch._scaled_grouped_mm FP8 2d x 2d ragged K, per-group row-wise scales, "
    "bf16 out (fast: use_fast_accum=True). floor us: max(FLOP / 1475 TFLOPS, minimal bytes / "
    "4.26 TB/s), minimal bytes = A + B (FP8) + scales + C read + D written (FP32). "
    "floor/ours: fraction of the floor reached.")


def report(args: argparse.Namespace, bench: "Bench", rows: List[Row]) -> None:
    """The table, the dense ceiling, the legend and the status; the markdown file if asked."""
    log()
    log("clocks after the run: " + clocks_line())
    table_rows = [fmt_row(r) for r in rows]
    dense_lines = [f"{label}: " + (f"{tf:.0f} TFLOPS ({note})" if tf else note)
                   for label, tf, note in bench.dense]
    log()
    log(text_table(table_rows))
    log()
    log(f"dense ceiling (8192^3 FP8, measured now): {'; '.join(dense_lines) or 'n/a'}; "
        f"issue's figure {DENSE_CEILING_TFLOPS:.0f} TFLOPS")
    log(LEGEND)
    status = "OK"
    if bench.wrong:
        status = "WRONG RESULTS: " + "; ".join(bench.wrong)
    elif bench.ours_failed:
        status = "our GEMM did not run on: " + ", ".join(bench.ours_failed)
    log(f"status: {status}")

    if args.md:
        try:
            md = ["# dgemm k-grouped FP8 wgrad benchmark" + (" (--quick)" if args.quick else ""),
                  "", time.strftime("%Y-%m-%d %H:%M:%S %Z"), ""]
            md += [f"- {h}" for h in bench.header]
            md += ["", md_table(table_rows), ""]
            md += [f"- {r.shape.name()}: ks = {r.shape.ks} ({r.shape.seed_note})" for r in rows]
            md += ["",
                   f"Dense ceiling (8192^3 FP8, measured in the same run): "
                   f"{'; '.join(dense_lines) or 'n/a'}; issue's figure "
                   f"{DENSE_CEILING_TFLOPS:.0f} TFLOPS.", "", LEGEND, "", f"Status: {status}", ""]
            Path(args.md).write_text("\n".join(md))
            log(f"markdown written to {args.md}")
        except Exception as e:  # noqa: BLE001
            log(f"!! could not write {args.md}: {short_exc(e)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="the seed shape and one large shape, 10 timed runs (smoke test)")
    parser.add_argument("--runs", type=int, default=None, help="timed runs (default 30; 10 with --quick)")
    parser.add_argument("--warmup", type=int, default=5, help="warm-up calls (default 5)")
    parser.add_argument("--no-peers", action="store_true",
                        help="time only our kernel (for comparing kernel bundles in one call)")
    parser.add_argument("--separate-c", action="store_true",
                        help="pass a c tensor other than d (d = c + sum, written from registers); "
                             "default: accumulate into d in place, as DeepGEMM's kernel does")
    parser.add_argument("--flush-mb", type=int, default=L2_FLUSH_BYTES >> 20,
                        help="MiB zeroed before every timed run (default 256: flushes the 60 MiB "
                             "L2). 8192 is the issue's reference method (an 8 GB flush), which "
                             "also idles the tensor cores for ~2.5 ms between runs, so the card "
                             "draws less power and holds higher clocks than with back-to-back "
                             "runs")
    parser.add_argument("--deepgemm-peer", default=os.environ.get("DGEMM_DEEPGEMM_PEER"),
                        help="time DeepGEMM's own kernel too, from this peer library "
                             "(scripts/build_deepgemm_peer.sh; default $DGEMM_DEEPGEMM_PEER); "
                             "in place only")
    parser.add_argument("--md", default=os.environ.get("BENCH_MD"),
                        help="also write the table as markdown here (default $BENCH_MD)")
    args = parser.parse_args()
    if args.runs is None:
        args.runs = 10 if args.quick else 30
    args.runs = max(1, args.runs)
    args.warmup = max(1, args.warmup)
    if args.flush_mb < 64:
        parser.error(f"--flush-mb must be at least 64 (the L2 is 60 MiB), got {args.flush_mb}")

    setup_import_path()
    log(f"dgemm k-grouped FP8 wgrad benchmark{' (--quick)' if args.quick else ''}, "
        f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}; "
        f"{'separate c (d = c + sum)' if args.separate_c else 'c is d (accumulate in place)'}")
    bench = Bench(args)
    if not bench.setup():
        log("!! setup failed; no benchmark ran")
        return 2

    rows: List[Row] = []
    for shape in make_shapes(args.quick):
        try:
            rows.append(bench.run_shape(shape))
        except Exception as e:  # noqa: BLE001  (a bug in this script must not end the run)
            log(f"!! {shape.name()}: unexpected error: {short_exc(e)}")
            traceback.print_exc()
            r = Row(shape)
            r.ours_note = f"error: {short_exc(e, 80)}"
            rows.append(r)
            bench.ours_failed.append(shape.name())
    try:
        if not args.no_peers:
            bench.run_dense()
    except Exception as e:  # noqa: BLE001
        log(f"!! dense ceiling: unexpected error: {short_exc(e)}")

    report(args, bench, rows)
    if bench.dg_peer is not None:
        # DeepGEMM's column last, after our table, status and markdown are out: a hang (the
        # step's timeout then ends the process) or a broken context costs only this column.
        log()
        log("== DeepGEMM's column (the table is printed again afterwards)")
        for r in rows:
            try:
                bench.deepgemm_pass(r.shape, r)
            except Exception as e:  # noqa: BLE001
                r.dg_note = f"error: {short_exc(e, 80)}"
                log(f"!! DeepGEMM on {r.shape.name()}: unexpected error: {short_exc(e)}")
        report(args, bench, rows)

    if bench.wrong:
        return 1
    if bench.ours_failed:
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
