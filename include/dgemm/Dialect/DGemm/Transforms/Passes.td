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
           "where the kernel cannot have it)">
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
  let options = [
    Option<"scaleRegisterBudget", "scale-register-budget", "int", "202",
           "Registers a math thread may hold for its WGMMA fragment, FP32 sum "
           "and a block's scales at once; tiles that need more read the "
           "scales during the promotion and release the stage after it (for "
           "the 232 registers of two math warpgroups; three math warpgroups, "
           "with 160, get 72 fewer)">,
    Option<"scalePrefixCols", "scale-prefix-cols", "int64_t", "0",
           "For a one-block-per-turn tile whose scales exceed "
           "scale-register-budget: hold the scales of this many first "
           "columns (a multiple of 8) in registers, read before the WGMMAs, "
           "and read the rest during the promotion (0: none)">,
    Option<"mmaSlices", "mma-slices", "int", "1",
           "Column slices each block product is split into (one WGMMA commit "
           "group each), so that the promotion of a slice overlaps the "
           "WGMMA of the next; 1 computes the whole tile as one group">,
    Option<"scalesBeforeMma", "scales-before-mma", "bool", "true",
           "Read register-held scales before issuing the block's WGMMAs "
           "(false: after them)">,
    Option<"alternateWarpgroups", "alternate-warpgroups", "bool", "true",
           "Two math warpgroups take turns issuing WGMMA (dgemm.turn), so "
           "one's WGMMAs run while the other promotes">,
    Option<"passAfterIssue", "pass-turn-after-issue", "bool", "false",
           "With alternate-warpgroups: hand the turn over as soon as the "
           "WGMMAs are issued instead of once they completed">,
    Option<"prefetchNextC", "prefetch-next-c", "bool", "false",
           "At the start of each tile, prefetch the c tile of the math "
           "role's next tile into L2 (dgemm.prefetch_c)">,
    Option<"blocksPerTurn", "blocks-per-turn", "int64_t", "2",
           "K blocks whose WGMMAs a math warpgroup issues at once (1 or 2; "
           "2 applies to two math warpgroups with block_n <= 128, where both "
           "fragments fit)">,
    Option<"deferEpilogue", "defer-epilogue", "bool", "false",
           "In-place kernels with one block per turn: each tile's epilogue "
           "runs in the next tile with K blocks, right after that tile's "
           "first WGMMAs are issued and the tensor-core turn is handed "
           "over, so that it overlaps them and the other warpgroup's (the "
           "last tile's after the tile loop); c is prefetched at the tile's "
           "start for tiles of at most 8 blocks; not with park = 1, whose "
           "epilogue overlaps the next tile already">,
    Option<"reloadSfaAfterTurn", "reload-sfa-after-turn", "bool", "false",
           "With the scales held in registers and tensor-core turns: read "
           "the block's two sfa values again from the stage right after "
           "the turn is handed over, and promote with those. The promotion "
           "then depends on a shared-memory load that ptxas keeps after the "
           "hand-over's bar.arrive; without one, ptxas moves the bar.arrive "
           "below the register-only promotion">,
    Option<"overlapPromotion", "overlap-promotion", "bool", "false",
           "Promote each block while the next block's WGMMAs run, across "
           "loop iterations (one fragment in flight past the iteration's end; "
           "tiles with block_n <= 128, no mma-slices, no turns)">,
    Option<"narrowTailMma", "narrow-tail-mma", "bool", "false",
           "Tiles wider than 64 columns, computed whole (mma-slices = 1), "
           "without defer-epilogue or overlap-promotion: a tile with at "
           "most 64 or 128 columns inside N (the last n-block of an N that "
           "block_n does not divide) runs block loops of their own whose "
           "WGMMAs and promotions are that narrow, chosen per tile at run "
           "time (measured no faster on the H100; bench/NOTES.md)">
  ];
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
    rejected.
  }];
  let options = [
    Option<"releasePerThread", "release-per-thread", "bool", "false",
           "Every math thread arrives on a stage's empty barrier (default: "
           "one arrive per warp after a warp-wide sync)">,
    Option<"waitBeforeTurn", "wait-before-turn", "bool", "false",
           "Place a stage's full-barrier wait before the tensor-core turn's "
           "wait (dgemm.turn wait) that precedes its first read, instead of "
           "after it">,
    Option<"skipDescriptorDrain", "unsafe-skip-descriptor-drain", "bool",
           "false",
           "TEST ONLY: omit the drain before descriptor rewrites, reproducing "
           "DeepGEMM 2.6.1's race">,
    Option<"skipProxyFence", "unsafe-skip-proxy-fence", "bool", "false",
           "TEST ONLY: omit the proxy fence between the math role's generic "
           "reads of a stage and its release to the producer's TMA writes">
  ];
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

def ConvertDGemmToNVVM : Pass<"convert-dgemm-to-nvvm", "ModuleOp"> {
  let summary = "Lowers dgemm kernels to NVVM and LLVM dialect functions";
  let description = [{
    Each `dgemm.kernel` becomes an `llvm.func` marked `nvvm.kernel` whose
    tensor-map parameters are by-value grid constants; the kernel ops become
    `nvvm` mbarrier, `cp.async.bulk.tensor`, `wgmma`, proxy-fence and
    `setmaxnreg` operations (inline PTX where NVVM has no op, such as
    `tensormap.replace`). arith and scf are left for the upstream conversions.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
  let options = [
    Option<"perChunkEpilogue", "per-chunk-epilogue", "bool", "false",
           "The previous epilogue: each 2-element chunk guarded, loaded, "
           "added and stored in turn (slower; kept for comparison)">,
    Option<"tmaReduceEpilogue", "tma-reduce-epilogue", "bool", "false",
           "When c and d are the same tensor (accumulate in place), stage "
           "the tile through shared memory and add it to d with TMA "
           "reduce-add stores (kernels whose shared memory has no room for "
           "the epilogue buffers, and those with quad_b = 1, keep the register "
           "path); otherwise d = c + sum is written from registers">,
    Option<"redEpilogue", "red-epilogue", "bool", "false",
           "When c and d are the same tensor, add each thread's chunks of "
           "the sum to d with red.global.add.v2.f32 (one reduction per "
           "element, in L2) instead of loading c; a separate c keeps the "
           "register path. tma-reduce-epilogue takes precedence. Without "
           "it, a kernel whose config has red_max_blocks = B > 0 reduces "
           "tiles of at most B blocks">,
    Option<"redEpilogueMaxBlocks", "red-epilogue-max-blocks", "int64_t", "0",
           "With red-epilogue: only tiles of at most this many 128-deep "
           "blocks reduce into d; longer ones take the register path "
           "(0: every tile)">,
    Option<"redVectorWidth", "red-vector-width", "int64_t", "0",
           "Elements per reduction of the reduction epilogue: 2 "
           "(red.global.add.v2.f32 of each thread's own column pairs), 4 "
           "(neighbouring lanes swap half of their pairs with shuffles, then "
           "red.global.add.v4.f32: half the reduction instructions) or 0 "
           "(4 for kernels without B multicast, 2 with cluster_m = 2: the "
           "widths measured faster for each). Kernels with quad_b = 1 always "
           "reduce 16 bytes of their own consecutive columns">,
    Option<"epilogueChunkCols", "epilogue-chunk-cols", "int64_t", "16",
           "Columns each math warpgroup stages per barrier round of the TMA "
           "reduce-add epilogue (8 or 16); its 8 KiB of buffers hold "
           "64 / epilogue-chunk-cols chunks">,
    Option<"prefetchCBlocks", "prefetch-c-blocks", "int64_t", "4",
           "Prefetch the tile's c into L2 when this many 128-deep blocks of "
           "the tile remain (0: when the tile starts; -1: no prefetch)">,
    Option<"prefetchCMaxBlocks", "prefetch-c-max-blocks", "int64_t", "0",
           "Prefetch c only for tiles of at most this many 128-deep blocks "
           "(0: every tile)">,
    Option<"inPlacePrefetchMaxBlocks", "in-place-prefetch-max-blocks",
           "int64_t", "8",
           "In-place kernels (in_place_only = 1) prefetch c at the tile's "
           "start only for tiles of at most this many 128-deep blocks "
           "(0: every tile; -1: never)">,
    Option<"unscaledPromotion", "unsafe-unscaled-promotion", "bool", "false",
           "TEST ONLY (wrong results): the promotion adds the fragment to "
           "the sum without the scales (no scale loads, no products), to "
           "time the kernel without the promotion's cost">,
    Option<"skipEpilogue", "unsafe-skip-epilogue", "bool", "false",
           "TEST ONLY (wrong results): every tile's epilogue runs only when "
           "the workspace pointer is null, which the runtime never passes, "
           "so the sums are computed but never written, to time the kernel "
           "without the epilogue's cost; in a kernel that parks its tiles, "
           "the park's stores and the workers' reductions are skipped the "
           "same way and the hand-over between them is kept">,
    Option<"sfbStride", "unsafe-sfb-stride", "int64_t", "1",
           "TEST ONLY (wrong results unless 1): the promotion reads the sfb "
           "pair of every this-many-th 8-column group from the stage and "
           "reuses it for the groups in between; 0 reads none (sfa stands "
           "in), to time the promotion with fewer shared-memory scale loads; "
           "not applied to kernels with quad_b = 1">,
    Option<"sfbVec4", "unsafe-sfb-vec4", "bool", "false",
           "TEST ONLY (wrong results): for every second 8-column group the "
           "promotion reads 16 bytes of that group's sfb values at the "
           "16-byte boundary below the thread's pair and uses them for that "
           "group and the next (half the distinct values, in half the "
           "loads); not applied to kernels with quad_b = 1">,
    Option<"mmaSetupBeforeTurn", "mma-setup-before-turn", "bool", "true",
           "Compute a block's WGMMA operand descriptors before the "
           "tensor-core turn's wait (false: after it, at the WGMMAs)">,
    Option<"epilogueVectorWidth", "epilogue-vector-width", "int64_t", "2",
           "Elements per load of c and store of d in the register epilogue: "
           "2 (each thread's own column pairs) or 4 (neighbouring lanes swap "
           "half of their sums with shuffles, then 16-byte loads and "
           "stores; measured 0-5% slower on the H200). Kernels with quad_b = 1 "
           "always load and store 16 bytes of their own consecutive columns">,
    Option<"turnPassPending", "turn-pass-pending", "int64_t", "0",
           "WGMMAs of a block (0-3 of its 4) still running when a math "
           "warpgroup hands the tensor-core turn over: each block's last N "
           "WGMMAs form a commit group of their own, the turn passes once "
           "the first ones completed and the promotion waits for the rest "
           "(0: the turn passes when the block completed)">,
    Option<"uniformWarpgroup", "uniform-warpgroup", "bool", "true",
           "Broadcast the math warpgroup index from lane 0 (shfl.sync.idx) "
           "before building the WGMMA operand descriptors, so that ptxas "
           "keeps them in uniform registers">
  ];
}

#endif // DGEMM_PASSES
