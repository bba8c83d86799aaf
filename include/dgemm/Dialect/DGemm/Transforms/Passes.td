//===- Passes.td - dgemm passes ----------------------------*- tablegen -*-===//

#ifndef DGEMM_PASSES
#define DGEMM_PASSES

include "mlir/Pass/PassBase.td"

def DGemmSelectConfig : Pass<"dgemm-select-config", "ModuleOp"> {
  let summary = "Chooses a tuning configuration for every dgemm.gemm without one";
  let description = [{
    Runs the shared heuristics library (runtime/heuristics, also used by the
    runtime) on each `dgemm.gemm` that has no `config`: block sizes, pipeline
    depth, descriptor slots and math warpgroups for the target's SM count and
    shared-memory budget. A configuration already present is kept (and was
    checked by the verifier).
  }];
  let options = [
    Option<"numSMs", "num-sms", "int", "132", "Multiprocessors of the target">,
    Option<"smemBytes", "smem-bytes", "int", "232448",
           "Dynamic shared memory per block of the target (227 KiB on H200)">,
    Option<"memoryBandwidthGBps", "memory-bandwidth-gbps", "int", "0",
           "Peak memory bandwidth of the target in GB/s; from 4000 the "
           "heuristics' H200 calibration applies (0: unknown, the H100's)">,
    Option<"expectedK", "expected-k", "int64_t", "0",
           "Expected K per group for k-grouped problems (0: heuristic default)">,
    Option<"descSlots", "desc-slots", "int", "0",
           "Descriptor slots per operand (0: the heuristic's choice; 1 is "
           "DeepGEMM's single rewritten descriptor)">,
    Option<"clusterM", "cluster-m", "int", "0",
           "CTAs per cluster along M, which share (multicast) the B tile (0: "
           "the heuristic's choice)">,
    Option<"inPlace", "in-place", "bool", "false",
           "Select as the runtime does for calls with c = d: short groups "
           "(see expected-k) then get the reduction epilogue "
           "(red_max_blocks)">,
    Option<"quadB", "quad-b", "int", "-1",
           "Quad-ordered B (quad_b): -1 as the heuristics decide for the "
           "kernel the other options leave, 0 never, 1 always (an error "
           "where the kernel cannot have it)">,
    Option<"unsafe", "unsafe", "std::string", "\"\"",
           "TEST ONLY: race demonstrations recorded in the configuration "
           "(config unsafe = ...), comma-separated: skip_descriptor_drain "
           "(DeepGEMM 2.6.1's race: no drain before a descriptor rewrite), "
           "skip_proxy_fence (no proxy fence before releasing a stage read "
           "through the generic proxy). dgemm-place-sync then omits them; "
           "the runtime refuses such kernels unless the caller opts in">
  ];
  let statistics = [
    Statistic<"numSelected", "num-selected", "Configurations chosen">
  ];
}

def DGemmLowerToKernel : Pass<"dgemm-lower-to-kernel", "ModuleOp"> {
  let summary = "Builds the warp-specialized persistent kernel of each description";
  let description = [{
    Replaces each configured `dgemm.gemm` by a `dgemm.kernel`: a producer role
    (one thread issuing TMA loads into a ring of shared-memory stages and
    rewriting per-group tensor maps in a ring of descriptor slots) and a math
    role (WGMMA per 128-deep block, FP32 promotion with the block's scales,
    epilogue), both walking the same persistent tile schedule. The kernel
    carries no synchronization: its operations only declare what they read and
    write. Only k_grouped_contiguous is lowered today.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect"];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Kernels built">
  ];
}

def DGemmPlaceSync : Pass<"dgemm-place-sync", "ModuleOp"> {
  let summary = "Derives barriers, waits and fences from resource effects";
  let description = [{
    For every role of every `dgemm.warp_specialize`, reads the resource
    accesses its operations declare and inserts:
    - before the producer's first async write of a stage in an iteration, a
      wait on the stage's empty barrier and an arrive on its full barrier
      expecting the bytes of all writes of that stage in the iteration;
    - before the math role's first read of a stage, a wait on its full
      barrier; before a generic read of an accumulator written by WGMMA, a
      `dgemm.mma.wait`; after the last read of a stage (and the wait that
      completes its async reads), an arrive on its empty barrier, preceded
      by a `dgemm.proxy.fence` when the stage was read through the generic
      proxy and the producer refills it through the async proxy;
    - before each generic write of a descriptor slot, a drain of the loads
      that may still read it, and after it the tensormap release/acquire pair;
    - around a park slot's generic accesses in a block of a role (one role
      writes it, another reads it): before the first one a wait on the
      slot's park_empty barrier (writer) or park_full barrier (reader), and
      after the last one an arrive on the other barrier of the pair;
    and records the barriers' arrival counts on the warp_specialize op (for
    the park, every thread of the role that writes or reads it).
    WGMMA work still in flight may be carried from one loop iteration to the
    next through scf.for iter_args, and into both branches of an scf.if
    (docs/Synchronization.md); other regions entered with work in flight are
    rejected. A configuration with race demonstrations (`unsafe`) omits
    what they name: the drains (skip_descriptor_drain) or the proxy fences
    (skip_proxy_fence).
  }];
  let statistics = [
    Statistic<"numWaits", "num-waits", "Barrier waits placed">,
    Statistic<"numArrives", "num-arrives", "Barrier arrives placed">,
    Statistic<"numDrains", "num-drains", "Descriptor drains placed">,
    Statistic<"numFences", "num-proxy-fences", "Proxy fences placed">
  ];
}

def DGemmVerifySync : Pass<"dgemm-verify-sync", "ModuleOp"> {
  let summary = "Rejects kernels with an unordered hazard";
  let description = [{
    An independent checker over the same resource effects: a stage read before
    its full-barrier wait, a stage written before its empty-barrier wait, a
    stage released while an asynchronous read may be pending, a full-barrier
    arrive whose byte count differs from the loads it covers, an accumulator
    read before its WGMMA completed, a descriptor slot rewritten while TMA
    loads issued with its previous contents may still read it, a load
    through a rewritten slot before the tensormap release/acquire, a park
    slot written before its park_empty wait or read before its park_full
    wait (with the slot's own phase), accessed after its release or never
    released, park arrival counts that differ from the writing and reading
    roles' threads, or writer and reader walking different tile loops. Each
    error names both operations of the hazard where there are two.
  }];
}

def ConvertDGemmToNVGPU : Pass<"convert-dgemm-to-nvgpu", "ModuleOp"> {
  let summary = "Lowers the dgemm kernel ops upstream nvgpu expresses to nvgpu";
  let description = [{
    The first of a kernel's two conversions (docs/UpstreamNVGPU.md). Before
    `dgemm.warp_specialize`, thread 0 initializes every barrier with the
    arrival count `dgemm-place-sync` recorded (`nvgpu.mbarrier.init`; the
    counts are then removed from the op); `dgemm.arrive` becomes
    `nvgpu.mbarrier.arrive.expect_tx` or `nvgpu.mbarrier.arrive` (a release
    in a cluster also arrives on the peers' barriers, in inline PTX); a
    multicast `dgemm.tma.load` becomes `nvgpu.tma.async.load` (a load into
    this CTA only keeps dgemm's `shared::cta` form), and a load through a
    descriptor slot records its iteration, which the `dgemm.desc.drain`
    before the slot's next rewrite waits for (a loop of `dgemm.wait`). The nvgpu ops see views of the kernel's one dynamic
    shared-memory array at the heuristics library's offsets. Upstream
    `convert-nvgpu-to-nvvm` follows, then `convert-dgemm-to-nvvm` for the
    ops that stay dgemm's.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::gpu::GPUDialect", "::mlir::nvgpu::NVGPUDialect"];
}

def ConvertDGemmToNVVM : Pass<"convert-dgemm-to-nvvm", "ModuleOp"> {
  let summary = "Lowers dgemm kernels to NVVM and LLVM dialect functions";
  let description = [{
    Each `dgemm.kernel` becomes an `llvm.func` marked `nvvm.kernel` whose
    tensor-map parameters are by-value grid constants; the kernel ops that
    `convert-dgemm-to-nvgpu` left become `nvvm` mbarrier-wait, `wgmma`,
    proxy-fence and `setmaxnreg` operations (inline PTX where NVVM has no
    op, such as `tensormap.replace`). arith and scf are left for the
    upstream conversions.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // DGEMM_PASSES
