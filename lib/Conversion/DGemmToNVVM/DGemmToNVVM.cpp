//===- DGemmToNVVM.cpp - Lower dgemm kernels to NVVM ----------------------===//
//
// Each dgemm.kernel becomes an llvm.func kernel; its dgemm ops become NVVM
// operations (mbarrier, cp.async.bulk.tensor, wgmma, proxy fences,
// setmaxregister) and LLVM arithmetic. `tensormap.replace`, which NVVM has no
// op for, is emitted as inline PTX. arith and scf are left to the upstream
// conversions that follow in the pipeline.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"
#include "dgemm/Heuristics/KernelConfig.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <functional>

namespace mlir::dgemm {
#define GEN_PASS_DEF_CONVERTDGEMMTONVVM
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;

namespace {

constexpr StringLiteral kSmemSymbol = "dgemm_dynamic_smem";

/// Byte offsets of the shared-memory carve-up; must match smemBytesFor() in
/// runtime/heuristics (1024 bytes of slack are reserved there for alignment).
struct SmemLayout {
  int64_t stages, aBytes, bBytes, sfaBytes, sfbBytes;
  int64_t aBase, bBase, sfaBase, sfbBase, fullBase, emptyBase;
  /// Epilogue buffers (8 KiB per math warpgroup), present when they fit
  /// beside the pipeline (heuristics::hasEpilogueBuffers).
  int64_t stagingBase;
  bool hasStaging;
  static constexpr int64_t kBufferBytes =
      ::dgemm::heuristics::kEpilogueBufferBytes;
  static constexpr int64_t kBuffers =
      ::dgemm::heuristics::kEpilogueBuffersPerWarpgroup;

  explicit SmemLayout(ConfigAttr c) {
    auto align = [](int64_t v, int64_t a) { return (v + a - 1) / a * a; };
    stages = c.getStages();
    aBytes = c.getBlockM() * c.getBlockK();
    bBytes = c.getBlockN() * c.getBlockK();
    sfaBytes = align(c.getBlockM() * 4, 128);
    sfbBytes = align(c.getBlockN() * 4, 128);
    aBase = 0;
    bBase = aBase + stages * aBytes;
    sfaBase = bBase + stages * bBytes;
    sfbBase = sfaBase + stages * sfaBytes;
    fullBase = sfbBase + stages * sfbBytes;
    emptyBase = fullBase + stages * 8;
    stagingBase = align(emptyBase + stages * 8, 1024);
    hasStaging = ::dgemm::heuristics::hasEpilogueBuffers(c.getBlockM(),
                                                         c.getBlockN(), stages);
  }
};

/// Lowers the ops of one kernel. Holds the values every op needs.
class KernelLowering {
public:
  KernelLowering(LLVM::LLVMFuncOp func, ConfigAttr config,
                 bool perChunkEpilogue, bool tmaReduceEpilogue,
                 int64_t epilogueChunkCols, int64_t prefetchCBlocks,
                 int64_t prefetchCMaxBlocks, bool redEpilogue,
                 int64_t redEpilogueMaxBlocks, int64_t redVectorWidth,
                 int64_t turnPassPending, bool unscaledPromotion,
                 bool mmaSetupBeforeTurn, int64_t epilogueVectorWidth,
                 bool inPlaceOnly, bool uniformWarpgroup, int64_t sfbStride,
                 bool sfbVec4, bool quadB, bool skipEpilogue)
      : func(func), config(config), layout(config), ctx(func.getContext()),
        perChunkEpilogue(perChunkEpilogue), redEpilogue(redEpilogue),
        redEpilogueMaxBlocks(redEpilogueMaxBlocks),
        redVectorWidth(redVectorWidth),
        tmaReduceEpilogue(tmaReduceEpilogue && layout.hasStaging),
        epilogueChunkCols(epilogueChunkCols), prefetchCBlocks(prefetchCBlocks),
        prefetchCMaxBlocks(prefetchCMaxBlocks),
        turnPassPending(turnPassPending),
        unscaledPromotion(unscaledPromotion),
        mmaSetupBeforeTurn(mmaSetupBeforeTurn),
        epilogueVectorWidth(epilogueVectorWidth), inPlaceOnly(inPlaceOnly),
        uniformWarpgroup(uniformWarpgroup), sfbStride(sfbStride),
        sfbVec4(sfbVec4), quadB(quadB), skipEpilogue(skipEpilogue) {}

  LogicalResult run(WarpSpecializeOp ws);

private:
  // --- small emitters -------------------------------------------------------
  Value i32(OpBuilder &b, Location loc, int64_t v) {
    return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
  }
  Value i64(OpBuilder &b, Location loc, int64_t v) {
    return b.create<LLVM::ConstantOp>(loc, b.getI64Type(), v);
  }
  Type smemPtr() { return LLVM::LLVMPointerType::get(ctx, 3); }
  Type genericPtr() { return LLVM::LLVMPointerType::get(ctx); }
  Type globalPtr() { return LLVM::LLVMPointerType::get(ctx, 1); }
  Value arg(KernelOp::Arg a) { return func.getArgument(a); }

  /// Shared-memory pointer `base + offset` (offset an i32 value).
  Value smemAt(OpBuilder &b, Location loc, Value offset) {
    Value base = b.create<LLVM::AddressOfOp>(loc, smemPtr(), kSmemSymbol);
    return b.create<LLVM::GEPOp>(loc, smemPtr(), b.getI8Type(), base,
                                 ValueRange{offset});
  }
  Value stageBuffer(OpBuilder &b, Location loc, int64_t base, int64_t bytes,
                    Value stage) {
    Value off = b.create<LLVM::MulOp>(loc, stage, i32(b, loc, bytes));
    off = b.create<LLVM::AddOp>(loc, off, i32(b, loc, base));
    return smemAt(b, loc, off);
  }
  Value barrier(OpBuilder &b, Location loc, BarrierKind kind, Value stage) {
    // The park has one slot (its ops' verifiers): one pair of barriers.
    if (kind == BarrierKind::park_full || kind == BarrierKind::park_empty)
      return parkBarrier(b, loc, kind == BarrierKind::park_full);
    return stageBuffer(b, loc,
                       kind == BarrierKind::full ? layout.fullBase
                                                 : layout.emptyBase,
                       8, stage);
  }
  Value tid(OpBuilder &b, Location loc) {
    return b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
  }
  /// This CTA's rank in its cluster: clusters are consecutive CTAs along x.
  Value clusterRank(OpBuilder &b, Location loc) {
    Value cta = b.create<NVVM::BlockIdXOp>(loc, b.getI32Type());
    return b.create<LLVM::URemOp>(loc, cta, i32(b, loc, config.getClusterM()));
  }
  /// All threads of every CTA of the cluster (not warp-aligned).
  void clusterSync(OpBuilder &b, Location loc) {
    inlinePtx(b, loc,
              "barrier.cluster.arrive.release;\n\t"
              "barrier.cluster.wait.acquire;",
              "~{memory}", ValueRange{});
  }
  /// Address of descriptor slot `slot` of `operand` for this CTA:
  /// workspace + ((blockIdx.x * slots + slot) * 2 + operand) * 128.
  Value slotAddress(OpBuilder &b, Location loc, TmaOperand operand,
                    Value slot) {
    Value cta = b.create<NVVM::BlockIdXOp>(loc, b.getI32Type());
    Value idx = b.create<LLVM::MulOp>(loc, cta,
                                      i32(b, loc, config.getDescSlots()));
    idx = b.create<LLVM::AddOp>(loc, idx, slot);
    idx = b.create<LLVM::MulOp>(loc, idx, i32(b, loc, 2));
    idx = b.create<LLVM::AddOp>(
        loc, idx, i32(b, loc, operand == TmaOperand::a ? 0 : 1));
    Value off = b.create<LLVM::ZExtOp>(loc, b.getI64Type(), idx);
    off = b.create<LLVM::MulOp>(loc, off, i64(b, loc, 128));
    return b.create<LLVM::GEPOp>(loc, globalPtr(), b.getI8Type(),
                                 arg(KernelOp::PtrWorkspace), ValueRange{off});
  }
  Value toGeneric(OpBuilder &b, Location loc, Value p) {
    return b.create<LLVM::AddrSpaceCastOp>(loc, genericPtr(), p);
  }
  void inlinePtx(OpBuilder &b, Location loc, StringRef ptx,
                 StringRef constraints, ValueRange operands) {
    b.create<LLVM::InlineAsmOp>(
        loc, TypeRange{}, operands, ptx, constraints, /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
  }

  /// Spins until the phase of parity `parity` of the mbarrier at `bar`
  /// completed. Written out rather than nvvm.mbarrier.try_wait.parity:
  /// MLIR 22 lowers that op to `@P1 bra.uni`, asserting that every lane of
  /// the warp sees the same try_wait result, which PTX does not promise (a
  /// lane may time out of try_wait while another sees completion). A
  /// mispredicted uniform branch leaves lanes that have not acquired the
  /// phase running ahead into wgmma.*.sync.aligned. A plain `bra` lets ptxas
  /// reconverge the warp first.
  void waitParity(OpBuilder &b, Location loc, Value bar, Value parity) {
    Value addr = b.create<LLVM::PtrToIntOp>(loc, b.getI32Type(), bar);
    b.create<LLVM::InlineAsmOp>(
        loc, TypeRange{}, ValueRange{addr, parity, i32(b, loc, 0x989680)},
        "{\n\t.reg .pred p;\n\twait:\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1, $2;\n\t"
        "@p bra done;\n\tbra wait;\n\tdone:\n\t}",
        "r,r,r,~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  }

  /// lastUse[r] = (slot == r) ? it : lastUse[r], for every r: plain stores
  /// to scalar allocas, which SROA turns into registers.
  void recordUse(OpBuilder &b, Location loc, Value slot, Value it) {
    for (auto [r, cell] : llvm::enumerate(lastUse)) {
      Value old = b.create<LLVM::LoadOp>(loc, b.getI32Type(), cell);
      Value hit = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, slot,
                                         i32(b, loc, r));
      b.create<LLVM::StoreOp>(loc, b.create<LLVM::SelectOp>(loc, hit, it, old),
                              cell);
    }
  }

  // --- op lowerings ---------------------------------------------------------
  void lowerStage(StageOp op);
  void lowerWait(WaitOp op);
  void lowerArrive(ArriveOp op);
  void lowerTmaLoad(TmaLoadOp op);
  void lowerDescUpdate(DescUpdateOp op);
  void lowerDescDrain(DescDrainOp op);
  void lowerDescPublish(DescPublishOp op);
  void lowerMma(MmaOp op);
  void lowerMmaWait(MmaWaitOp op);
  void lowerTurn(TurnOp op);
  void lowerProxyFence(ProxyFenceOp op);
  void lowerLoadScales(LoadScalesOp op);
  struct StageScales stageScales(OpBuilder &b, Location loc, Value stage);
  void lowerPromote(PromoteOp op);
  Value tileBlocks(ValueRange sums, Value blocks);
  void lowerEpilogue(EpilogueOp op);
  void prefetchC(Operation *op, ValueRange sums, Value deferredBlocks,
                 Value group, Value mBlock, Value nBlock);
  void lowerPrefetchC(PrefetchCOp op);
  void emitPrefetch(OpBuilder &b, Location loc, Value group, Value mBlock,
                    Value nBlock);
  void reduceEpilogue(OpBuilder &b, Location loc, EpilogueOp op,
                      function_ref<Value(OpBuilder &, int, int64_t)> mine);
  void lowerParkStore(ParkStoreOp op);
  void behindNullWorkspace(Operation *op);
  void lowerParkReduce(ParkReduceOp op);
  /// The parked tile (park = 1) and its two mbarriers.
  int64_t parkBytes() const { return config.getBlockM() * config.getBlockN() * 4; }
  int64_t parkBase() const { return layout.stagingBase; }
  Value parkBarrier(OpBuilder &b, Location loc, bool full) {
    return smemAt(b, loc, i32(b, loc, parkBase() + parkBytes() + (full ? 0 : 8)));
  }
  /// Unit u of park row r sits at (u & ~7) | ((u & 7) ^ parkSwizzle(r)), with
  /// parkSwizzle(r) = 2 (r % 4). An 8-byte store of the math warps is served
  /// in two half-warp passes, each over rows r .. r + 3 (lane / 4) and 8
  /// bytes of one unit pair per quad lane: the four rows' unit pairs (j % 4)
  /// ^ (r % 4) are distinct, so each pass hits all 32 banks once. A 16-byte
  /// load of the workers reads 8 consecutive units of one row per
  /// quarter-warp pass: a permutation of one 128-byte group.
  Value parkSwizzle(OpBuilder &b, Location loc, Value row) {
    return b.create<arith::MulIOp>(
        loc, b.create<arith::AndIOp>(loc, row, i32(b, loc, 3)), i32(b, loc, 2));
  }
  /// The parked tile's record after the barriers: its coordinates as one
  /// value, (group * M tiles + m-block) * N tiles + n-block.
  Value parkRecord(OpBuilder &b, Location loc) {
    return smemAt(b, loc, i32(b, loc, parkBase() + parkBytes() + 16));
  }
  /// (M tiles, N tiles) of the problem.
  std::pair<Value, Value> tileCounts(OpBuilder &b, Location loc);

  LLVM::LLVMFuncOp func;
  ConfigAttr config;
  SmemLayout layout;
  MLIRContext *ctx;
  bool perChunkEpilogue;
  bool redEpilogue;
  int64_t redEpilogueMaxBlocks;
  int64_t redVectorWidth;
  bool tmaReduceEpilogue;
  int64_t epilogueChunkCols;
  int64_t prefetchCBlocks;
  int64_t prefetchCMaxBlocks;
  int64_t turnPassPending;
  bool unscaledPromotion;
  bool mmaSetupBeforeTurn;
  int64_t epilogueVectorWidth;
  bool inPlaceOnly;
  bool uniformWarpgroup;
  int64_t sfbStride;
  bool sfbVec4;
  /// B's rows reach shared memory in quad order (quad_b = 1): fragment
  /// column (j, c) of lane q is tile column 16(j / 2) + 4q + 2(j % 2) + c.
  bool quadB;
  /// unsafe-skip-epilogue (timing only): epilogues behind a null-workspace
  /// test.
  bool skipEpilogue;
  /// Threads of the producer warpgroup (from thread 32 on) that run the
  /// workers' role (dgemm.warp_specialize's worker_threads; 0: none).
  int64_t workerThreads = 0;
  /// The math warpgroup index broadcast from lane 0 (uniform-warpgroup).
  Value uniformWg;
  /// Math-role releases: one arrive per warp (else per thread), following
  /// the arrival count dgemm-place-sync recorded.
  bool releasePerWarp = true;
  /// Producer-thread registers: the last pipeline iteration that loaded
  /// through each descriptor slot (what a drain must wait for).
  SmallVector<Value> lastUse;
};

void KernelLowering::lowerStage(StageOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value s = i32(b, loc, op.getStages());
  Value stage = b.create<arith::RemUIOp>(loc, op.getIteration(), s);
  Value round = b.create<arith::DivUIOp>(loc, op.getIteration(), s);
  Value phase = b.create<arith::AndIOp>(loc, round, i32(b, loc, 1));
  op.getStage().replaceAllUsesWith(stage);
  op.getPhase().replaceAllUsesWith(phase);
  op.erase();
}

void KernelLowering::lowerWait(WaitOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value parity = op.getPhase();
  // The producer waits for the release of the stage's previous contents: a
  // fresh barrier counts as released (its "previous" phase has parity 1).
  if (op.getBarrier() == BarrierKind::empty ||
      op.getBarrier() == BarrierKind::park_empty)
    parity = b.create<LLVM::XOrOp>(loc, parity, i32(b, loc, 1));
  waitParity(b, loc, barrier(b, loc, op.getBarrier(), op.getStage()), parity);
  op.erase();
}

void KernelLowering::lowerArrive(ArriveOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value bar = barrier(b, loc, op.getBarrier(), op.getStage());
  // A park barrier counts every thread of the role that arrives
  // (dgemm-place-sync): each thread's arrive releases its own accesses.
  if (op.getBarrier() == BarrierKind::park_full ||
      op.getBarrier() == BarrierKind::park_empty) {
    b.create<NVVM::MBarrierArriveOp>(loc, Type(), bar, Value(),
                                     NVVM::MemScopeKind::CTA,
                                     /*relaxed=*/false);
    op.erase();
    return;
  }
  if (std::optional<uint64_t> tx = op.getTxBytes()) {
    b.create<NVVM::MBarrierArriveExpectTxOp>(
        loc, Type(), bar, i32(b, loc, static_cast<int64_t>(*tx)),
        NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
    op.erase();
    return;
  }
  // A release arrives on the stage's empty barrier of every CTA of the
  // cluster: with multicast, each CTA's producer also writes the others'
  // stages.
  auto release = [&](OpBuilder &rb) {
    rb.create<NVVM::MBarrierArriveOp>(loc, Type(), bar, Value(),
                                      NVVM::MemScopeKind::CTA,
                                      /*relaxed=*/false);
    if (config.getClusterM() == 1)
      return;
    Value local = rb.create<LLVM::PtrToIntOp>(loc, rb.getI32Type(), bar);
    Value rank = clusterRank(rb, loc);
    for (int64_t d = 1; d < config.getClusterM(); ++d) {
      Value peer = rb.create<LLVM::URemOp>(
          loc, rb.create<LLVM::AddOp>(loc, rank, i32(rb, loc, d)),
          i32(rb, loc, config.getClusterM()));
      // CTA-scope release, as CUTLASS's ClusterBarrier::arrive: what must
      // precede the peer's next multicast into this CTA's stage are this
      // CTA's reads of it, already complete (wgmma.wait_group, and the proxy
      // fence for ld.shared). A .release.cluster arrive costs a GPU-scope
      // MEMBAR per warp per block in SASS.
      inlinePtx(rb, loc,
                "{\n\t.reg .b32 ra;\n\t"
                "mapa.shared::cluster.u32 ra, $0, $1;\n\t"
                "mbarrier.arrive.shared::cluster.b64 _, [ra];\n\t}",
                "r,r,~{memory}", ValueRange{local, peer});
    }
  };
  if (!releasePerWarp) {
    release(b);
    op.erase();
    return;
  }
  // A release by the math role: the warp's lanes synchronize (which orders
  // their earlier shared-memory reads before lane 0's release-arrive), then
  // one lane arrives for the warp. dgemm-place-sync counts 4 arrivals per
  // math warpgroup accordingly.
  b.create<NVVM::SyncWarpOp>(loc, i32(b, loc, -1));
  Value lane = b.create<arith::RemUIOp>(loc, tid(b, loc), i32(b, loc, 32));
  auto first = b.create<scf::IfOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, lane,
                                   i32(b, loc, 0)),
      /*withElseRegion=*/false);
  OpBuilder t = first.getThenBodyBuilder();
  release(t);
  op.erase();
}

void KernelLowering::lowerTmaLoad(TmaLoadOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value dst, desc;
  switch (op.getOperand()) {
  case TmaOperand::a:
    dst = stageBuffer(b, loc, layout.aBase, layout.aBytes, op.getStage());
    break;
  case TmaOperand::b:
    dst = stageBuffer(b, loc, layout.bBase, layout.bBytes, op.getStage());
    break;
  case TmaOperand::sfa:
    dst = stageBuffer(b, loc, layout.sfaBase, layout.sfaBytes, op.getStage());
    desc = arg(KernelOp::TmapSFA);
    break;
  case TmaOperand::sfb:
    dst = stageBuffer(b, loc, layout.sfbBase, layout.sfbBytes, op.getStage());
    desc = arg(KernelOp::TmapSFB);
    break;
  }
  if (Value slot = op.getSlot()) {
    desc = toGeneric(b, loc, slotAddress(b, loc, op.getOperand(), slot));
    // Remember the iteration for the drain before the slot's next rewrite.
    recordUse(b, loc, slot, op.getStage().getDefiningOp<StageOp>().getIteration());
  }
  Value bar = barrier(b, loc, BarrierKind::full, op.getStage());
  // A multicast load writes this CTA's rows of the B tile at the same offset
  // of the stage in every CTA of the cluster and completes the bytes on each
  // one's full barrier.
  Value mask;
  if (op.getMulticast()) {
    Value share = b.create<LLVM::MulOp>(
        loc, clusterRank(b, loc),
        i32(b, loc, layout.bBytes / config.getClusterM()));
    dst = b.create<LLVM::GEPOp>(loc, dst.getType(), b.getI8Type(), dst,
                                ValueRange{share});
    // The destination is named in the shared::cluster window.
    dst = b.create<LLVM::AddrSpaceCastOp>(
        loc, LLVM::LLVMPointerType::get(ctx, 7), dst);
    mask = b.create<LLVM::ConstantOp>(
        loc, b.getI16Type(),
        b.getI16IntegerAttr((1 << config.getClusterM()) - 1));
  }
  SmallVector<Value> coords{op.getX(), op.getY()};
  // Quad-ordered B rows: the map is 5-D (K, c, q, h, g) over rows
  // 16g + 4q + 2h + c, written to shared memory as row 16g + 8h + 2q + c;
  // the box starts at row y, a multiple of 16.
  if (quadB && op.getOperand() == TmaOperand::b) {
    Value zero = i32(b, loc, 0);
    coords = {op.getX(), zero, zero, zero,
              b.create<LLVM::LShrOp>(loc, op.getY(), i32(b, loc, 4))};
  }
  b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
      loc, dst, desc, coords, bar, ValueRange{},
      mask, Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/!mask,
      NVVM::CTAGroupKindAttr(), Value());
  op.erase();
}

void KernelLowering::lowerDescUpdate(DescUpdateOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  bool isA = op.getOperand() == TmaOperand::a;
  Value slot = slotAddress(b, loc, op.getOperand(), op.getSlot());
  // Start from the host-encoded template (a kernel parameter) ...
  Value tmpl = arg(isA ? KernelOp::TmapA : KernelOp::TmapB);
  for (int32_t i = 0; i < 16; ++i) {
    Value src = b.create<LLVM::GEPOp>(loc, genericPtr(), b.getI64Type(), tmpl,
                                      ArrayRef<LLVM::GEPArg>{i});
    Value v = b.create<LLVM::LoadOp>(loc, b.getI64Type(), src, /*align=*/8);
    Value dst = b.create<LLVM::GEPOp>(loc, globalPtr(), b.getI64Type(), slot,
                                      ArrayRef<LLVM::GEPArg>{i});
    b.create<LLVM::StoreOp>(loc, v, dst, /*align=*/8);
  }
  // ... and point it at this group: base + rows * k_offset, K_g x rows with
  // a K_g-byte row stride.
  Value rows = b.create<LLVM::ZExtOp>(
      loc, b.getI64Type(), arg(isA ? KernelOp::DimM : KernelOp::DimN));
  Value base = b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(),
                                          arg(isA ? KernelOp::PtrA
                                                  : KernelOp::PtrB));
  Value addr = b.create<LLVM::AddOp>(
      loc, base, b.create<LLVM::MulOp>(loc, rows, op.getKOffset()));
  Value k64 = b.create<LLVM::ZExtOp>(loc, b.getI64Type(), op.getKSize());
  inlinePtx(b, loc,
            "tensormap.replace.tile.global_address.global.b1024.b64 [$0], $1;",
            "l,l,~{memory}", ValueRange{slot, addr});
  inlinePtx(b, loc,
            "tensormap.replace.tile.global_dim.global.b1024.b32 [$0], 0, $1;",
            "l,r,~{memory}", ValueRange{slot, op.getKSize()});
  // Quad-ordered B rows (5-D map): dims 1-4 step 1, 4, 2 and 16 rows.
  const int64_t rowSteps[] = {1, 4, 2, 16};
  for (int64_t d = 0; d < (quadB && !isA ? 4 : 1); ++d)
    inlinePtx(b, loc,
              "tensormap.replace.tile.global_stride.global.b1024.b64 [$0], " +
                  std::to_string(d) + ", $1;",
              "l,l,~{memory}",
              ValueRange{slot, rowSteps[d] == 1
                                   ? k64
                                   : b.create<LLVM::MulOp>(
                                         loc, k64,
                                         b.create<LLVM::ConstantOp>(
                                             loc, b.getI64Type(),
                                             b.getI64IntegerAttr(rowSteps[d])))
                                         .getResult()});
  op.erase();
}

void KernelLowering::lowerDescDrain(DescDrainOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value last;
  for (auto [r, cell] : llvm::enumerate(lastUse)) {
    Value v = b.create<LLVM::LoadOp>(loc, b.getI32Type(), cell);
    if (!last) {
      last = v;
      continue;
    }
    Value hit = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq,
                                       op.getSlot(), i32(b, loc, r));
    last = b.create<LLVM::SelectOp>(loc, hit, v, last);
  }
  // Iterations before it - stages had their stage refilled, which required
  // the consumers to see them complete; only the last `stages` iterations up
  // to the slot's last use can still be in flight.
  Value it = op.getBeforeIteration();
  Value lo = b.create<arith::SubIOp>(loc, it, i32(b, loc, layout.stages));
  lo = b.create<arith::MaxSIOp>(loc, lo, i32(b, loc, 0));
  Value hi = b.create<arith::AddIOp>(loc, last, i32(b, loc, 1));
  auto loop = b.create<scf::ForOp>(loc, lo, hi, i32(b, loc, 1));
  b.setInsertionPointToStart(loop.getBody());
  // The iteration -> (stage, parity) map is dgemm.stage's; it is lowered
  // after this op, with every other dgemm.stage.
  auto st = b.create<StageOp>(loc, b.getI32Type(), b.getI32Type(),
                              loop.getInductionVar(),
                              b.getI32IntegerAttr(layout.stages));
  waitParity(b, loc, barrier(b, loc, BarrierKind::full, st.getStage()),
             st.getPhase());
  op.erase();
}

void KernelLowering::lowerDescPublish(DescPublishOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value slot = toGeneric(b, loc, slotAddress(b, loc, op.getOperand(),
                                             op.getSlot()));
  b.create<NVVM::FenceProxyReleaseOp>(loc, NVVM::MemScopeKind::GPU,
                                      NVVM::ProxyKind::GENERIC,
                                      NVVM::ProxyKind::TENSORMAP);
  b.create<NVVM::FenceProxyAcquireOp>(loc, NVVM::MemScopeKind::GPU, slot,
                                      i32(b, loc, 128),
                                      NVVM::ProxyKind::GENERIC,
                                      NVVM::ProxyKind::TENSORMAP);
  op.erase();
}

/// Math warpgroup index (0-based) of the executing thread.
static Value mathWarpgroup(OpBuilder &b, Location loc, Value tid) {
  Value wg = b.create<arith::DivUIOp>(
      loc, tid, b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 128));
  return b.create<arith::SubIOp>(
      loc, wg, b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 1));
}

void KernelLowering::lowerMma(MmaOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // mma-setup-before-turn: the operand descriptors are computed before the
  // turn's wait (when the stage is known there), so that only the WGMMAs
  // remain once the turn arrives. With several blocks per turn, every
  // block's descriptors go there (the walk passes the WGMMAs already lowered
  // for the earlier blocks).
  if (mmaSetupBeforeTurn)
    for (Operation *prev = op->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      if (auto turn = dyn_cast<TurnOp>(prev)) {
        Operation *def = op.getStage().getDefiningOp();
        if (turn.getAction() == TurnAction::wait &&
            (!def || def->getBlock() != turn->getBlock() ||
             def->isBeforeInBlock(turn)))
          b.setInsertionPoint(turn);
        break;
      }
      if (isa<MmaOp, MmaWaitOp, PromoteOp>(prev) || prev->getNumRegions())
        break;
    }
  // The slice's width; its B rows start col_offset rows (of 128 bytes) into
  // the stage's B tile, a whole number of 8-row swizzle atoms.
  int64_t n = 2 * cast<VectorType>(op.getAcc().getType()).getNumElements();
  // uniform-warpgroup: the index is taken from lane 0 with shfl.sync.idx,
  // which ptxas knows to be warp-uniform, so A's descriptor (the only
  // per-warpgroup part) is computed in uniform registers and the WGMMAs
  // need no R2UR moves between them. It is broadcast once, at the kernel's
  // entry, where every lane of every warp is active.
  if (uniformWarpgroup && !uniformWg) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&func.getBody().front());
    uniformWg = b.create<NVVM::ShflOp>(
        loc, b.getI32Type(), i32(b, loc, -1),
        mathWarpgroup(b, loc, tid(b, loc)), i32(b, loc, 0), i32(b, loc, 0x1f),
        NVVM::ShflKind::idx, UnitAttr());
  }
  Value wg =
      uniformWarpgroup ? uniformWg : mathWarpgroup(b, loc, tid(b, loc));
  Value aOff = b.create<LLVM::MulOp>(loc, op.getStage(),
                                     i32(b, loc, layout.aBytes));
  aOff = b.create<LLVM::AddOp>(
      loc, aOff, b.create<LLVM::MulOp>(loc, wg, i32(b, loc, 64 * 128)));
  Value aAddr = b.create<LLVM::AddOp>(loc, aOff, i32(b, loc, layout.aBase));
  Value bAddr = b.create<LLVM::AddOp>(
      loc, b.create<LLVM::MulOp>(loc, op.getStage(), i32(b, loc, layout.bBytes)),
      i32(b, loc, layout.bBase + op.getColOffset() * config.getBlockK()));
  // Shared-window address of the dynamic buffer.
  Value base = b.create<LLVM::AddressOfOp>(loc, smemPtr(), kSmemSymbol);
  Value base32 = b.create<LLVM::PtrToIntOp>(loc, b.getI32Type(), base);
  // K-major, 128B swizzle: SBO = 1024 bytes (8 rows of 128 bytes), LBO unused,
  // layout type 1 in bits 62-63.
  auto descriptor = [&](Value offset) {
    Value addr = b.create<LLVM::AddOp>(loc, base32, offset);
    Value field = b.create<LLVM::LShrOp>(
        loc, b.create<LLVM::AndOp>(loc, addr, i32(b, loc, 0x3FFFF)),
        i32(b, loc, 4));
    Value d = b.create<LLVM::ZExtOp>(loc, b.getI64Type(), field);
    int64_t hi = (int64_t(1) << 16) | (int64_t(1024 >> 4) << 32) |
                 (int64_t(1) << 62);
    return b.create<LLVM::OrOp>(loc, d, i64(b, loc, hi)).getResult();
  };
  Value descA = descriptor(aAddr), descB = descriptor(bAddr);
  b.setInsertionPoint(op);
  auto structType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(n / 2, b.getF32Type()));
  Value acc = b.create<LLVM::UndefOp>(loc, structType);
  b.create<NVVM::WgmmaFenceAlignedOp>(loc);
  for (int64_t kk = 0; kk < 4; ++kk) {
    // 32 FP8 elements of K = 32 bytes = 2 in the descriptor's 16-byte units.
    Value step = i64(b, loc, kk * 2);
    Value da = b.create<LLVM::AddOp>(loc, descA, step);
    Value db = b.create<LLVM::AddOp>(loc, descB, step);
    acc = b.create<NVVM::WgmmaMmaAsyncOp>(
        loc, structType, acc, da, db,
        NVVM::MMAShapeAttr::get(ctx, 64, n, 32),
        NVVM::WGMMATypes::e4m3, NVVM::WGMMATypes::e4m3,
        NVVM::WGMMATypes::f32,
        kk == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
        NVVM::MMALayout::row, NVVM::MMALayout::col,
        NVVM::MMAIntOverflowAttr());
    // turn-pass-pending = N: the last N WGMMAs are a commit group of their
    // own (every dgemm.mma is then two groups; lowerMmaWait counts so).
    if (turnPassPending > 0 && kk == 3 - turnPassPending)
      b.create<NVVM::WgmmaGroupSyncAlignedOp>(loc);
  }
  b.create<NVVM::WgmmaGroupSyncAlignedOp>(loc);
  // The registers are read only by dgemm.promote, after dgemm.mma.wait; keep
  // them in their struct until then. A fragment carried by a loop (still
  // being written when its iteration ends) travels as a vector, which the
  // NVPTX backend splits into the same registers again.
  Value result;
  if (llvm::all_of(op.getAcc().getUsers(), [](Operation *user) {
        return isa<PromoteOp, TurnOp>(user);
      })) {
    result = b.create<UnrealizedConversionCastOp>(loc, op.getAcc().getType(),
                                                  acc)
                 .getResult(0);
  } else {
    result = b.create<LLVM::UndefOp>(loc, op.getAcc().getType());
    for (int64_t r = 0; r < n / 2; ++r)
      result = b.create<LLVM::InsertElementOp>(
          loc, result, b.create<LLVM::ExtractValueOp>(loc, acc, r),
          i32(b, loc, r));
  }
  op.getAcc().replaceAllUsesWith(result);
  op.erase();
}

void KernelLowering::lowerMmaWait(MmaWaitOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  if (turnPassPending == 0) {
    b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, op.getPending());
    op.erase();
    return;
  }
  // Every dgemm.mma is two commit groups: "all but the last p blocks
  // completed" is "all but the last 2p groups".
  uint32_t pending = 2 * op.getPending();
  // A wait that completes everything before the turn passes (in the same
  // block, with no WGMMA issued or waited for in between) becomes: wait for
  // the newest block's first group, pass the turn, wait for the rest. What
  // the wait ordered before the pass (the stage's release, its fence) stays
  // after the full wait.
  TurnOp pass;
  if (op.getPending() == 0)
    for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
      if (auto turn = dyn_cast<TurnOp>(next)) {
        if (turn.getAction() == TurnAction::pass)
          pass = turn;
        break;
      }
      // Ops in between (the stage's fence and release, already lowered,
      // the release under an scf.if) stay after the complete wait; WGMMA
      // work in between ends the search.
      bool wgmma = isa<MmaOp, MmaWaitOp>(next) ||
                   next->walk([](Operation *inner) {
                         return isa<NVVM::WgmmaMmaAsyncOp,
                                    NVVM::WgmmaWaitGroupSyncOp>(inner)
                                    ? WalkResult::interrupt()
                                    : WalkResult::advance();
                       })
                       .wasInterrupted();
      if (wgmma)
        break;
    }
  if (pass) {
    b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, pending + 1);
    pass->moveBefore(op);
  }
  b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, pending);
  op.erase();
}

/// Named barrier 1 + w is math warpgroup w's turn; the turn goes round the
/// W math warpgroups in order. Each phase completes with the 128 threads of
/// the waiting warpgroup (bar.sync) and the 128 of the passing one
/// (bar.arrive). Barrier 0 is the CTA-wide one; the reduction epilogue uses
/// 1 + W + w.
void KernelLowering::lowerTurn(TurnOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  int64_t warpgroups = config.getMathWarpgroups();
  Value wg = mathWarpgroup(b, loc, tid(b, loc));
  Value one = i32(b, loc, 1);
  switch (op.getAction()) {
  case TurnAction::start: // the last warpgroup gives warpgroup 0 the first turn
    inlinePtx(b, loc,
              "{\n\t.reg .pred p;\n\tsetp.eq.u32 p, $0, " +
                  std::to_string(warpgroups - 1) +
                  ";\n\t@p bar.arrive 1, 256;\n\t}",
              "r,~{memory}", ValueRange{wg});
    break;
  case TurnAction::wait: // bar.sync (1 + wg)
    inlinePtx(b, loc, "bar.sync $0, 256;", "r,~{memory}",
              ValueRange{b.create<LLVM::AddOp>(loc, wg, one)});
    break;
  case TurnAction::pass: { // bar.arrive (1 + (wg + 1) % W): the next one's turn
    Value next;
    if (warpgroups == 2) {
      next = b.create<LLVM::SubOp>(loc, i32(b, loc, 2), wg);
    } else {
      Value last = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, wg,
                                          i32(b, loc, warpgroups - 1));
      next = b.create<LLVM::SelectOp>(loc, last, one,
                                      b.create<LLVM::AddOp>(loc, wg,
                                                            i32(b, loc, 2)));
    }
    inlinePtx(b, loc, "bar.arrive $0, 256;", "r,~{memory}", ValueRange{next});
    break;
  }
  case TurnAction::finish: // warpgroup 0 takes the last warpgroup's last pass
    inlinePtx(b, loc,
              "{\n\t.reg .pred p;\n\tsetp.eq.u32 p, $0, 0;\n\t"
              "@p bar.sync 1, 256;\n\t}",
              "r,~{memory}", ValueRange{wg});
    break;
  }
  op.erase();
}

void KernelLowering::lowerProxyFence(ProxyFenceOp op) {
  OpBuilder b(op);
  b.create<NVVM::FenceProxyOp>(op.getLoc(), NVVM::ProxyKind::async_shared,
                               NVVM::SharedSpaceAttr::get(
                                   ctx, NVVM::SharedSpace::shared_cta));
  op.erase();
}

/// Fragment coordinates of the executing math thread for m64nNk32 f32
/// accumulators: register r = j*4 + i*2 + c holds row (16*warp + lane/4 + 8*i)
/// of the warpgroup's 64 rows and WGMMA column (8*j + 2*(lane%4) + c), which
/// is tile column colInTile + colOf(j) + c:
/// - natural B rows: colInTile = 2*(lane%4), colOf(j) = 8j;
/// - quad-ordered B rows (quad_b = 1): colInTile = 4*(lane%4),
///   colOf(j) = 16*(j/2) + 2*(j%2), so that groups 2g and 2g + 1 hold 4
///   consecutive columns of each row.
struct Fragment {
  Value rowInTile; ///< row of i = 0 within the CTA tile
  Value colInTile; ///< column of j = 0, c = 0
  bool quads = false;
  int64_t colOf(int64_t j) const {
    return quads ? 16 * (j / 2) + 2 * (j % 2) : 8 * j;
  }
};
static Fragment fragmentOf(OpBuilder &b, Location loc, Value tid,
                           bool quads) {
  auto c = [&](int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
  };
  Value wg = mathWarpgroup(b, loc, tid);
  Value inWg = b.create<arith::RemUIOp>(loc, tid, c(128));
  Value warp = b.create<arith::DivUIOp>(loc, inWg, c(32));
  Value lane = b.create<arith::RemUIOp>(loc, tid, c(32));
  Value row = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, wg, c(64)),
      b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, warp, c(16)),
                              b.create<arith::DivUIOp>(loc, lane, c(4))));
  Value col = b.create<arith::MulIOp>(
      loc, b.create<arith::RemUIOp>(loc, lane, c(4)), c(quads ? 4 : 2));
  return {row, col, quads};
}

/// An epilogue's sums by 8-column group: the thread's pair of group j in row
/// half i is elements 4jj + 2i and 4jj + 2i + 1 of the sum slice holding j
/// (jj: j's group within that slice).
struct SumPairs {
  SmallVector<std::pair<Value, int64_t>> groupAt;
  explicit SumPairs(ValueRange tileSums) {
    for (Value sum : tileSums)
      for (int64_t jj = 0;
           jj < cast<VectorType>(sum.getType()).getNumElements() / 4; ++jj)
        groupAt.push_back({sum, jj});
  }
  Value pair(OpBuilder &b, Location loc, int i, int64_t j) const {
    auto c = [&](int64_t v) {
      return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
    };
    Value v = b.create<LLVM::UndefOp>(loc, VectorType::get({2}, b.getF32Type()));
    auto [sum, jj] = groupAt[j];
    for (int e = 0; e < 2; ++e) {
      Value s = b.create<LLVM::ExtractElementOp>(loc, sum, c(jj * 4 + i * 2 + e));
      v = b.create<LLVM::InsertElementOp>(loc, v, s, c(e));
    }
    return v;
  }
};

/// The executing thread's scales of one stage, read from shared memory:
/// sfa of its rows (fragment row, row + 8), then for each 8-column group j the
/// sfb pair of its columns, as one 8-byte load, or with quad-ordered B rows
/// the pairs of groups 2g and 2g + 1 as one 16-byte load.
struct StageScales {
  Value sfa, sfb;
  Fragment f;
  Value sfaOf(OpBuilder &b, Location loc, int i) const {
    return load(b, loc, sfa, f.rowInTile, 8 * i, b.getF32Type(), 4);
  }
  Value sfbPairOf(OpBuilder &b, Location loc, int64_t j) const {
    return load(b, loc, sfb, f.colInTile, f.colOf(j),
                VectorType::get({2}, b.getF32Type()), 8);
  }
  /// Quad-ordered B rows: the 4 sfb values of groups 2g and 2g + 1
  /// (elements 2(j % 2) + c).
  Value sfbQuadOf(OpBuilder &b, Location loc, int64_t g) const {
    return load(b, loc, sfb, f.colInTile, 16 * g,
                VectorType::get({4}, b.getF32Type()), 16);
  }
  /// unsafe-sfb-vec4 (timing only): 16 bytes of group j's sfb values, at the
  /// 16-byte boundary below the thread's pair (the caller reuses them for
  /// group j + 1).
  Value sfbAlignedQuadOf(OpBuilder &b, Location loc, int64_t j) const {
    Value aligned = b.create<arith::AndIOp>(
        loc, f.colInTile,
        b.create<arith::ConstantIntOp>(loc, b.getI32Type(), ~int64_t(3)));
    return load(b, loc, sfb, aligned, 8 * j,
                VectorType::get({4}, b.getF32Type()), 16);
  }

private:
  /// `type` at float index `index + offset` of `base`.
  static Value load(OpBuilder &b, Location loc, Value base, Value index,
                    int64_t offset, Type type, unsigned align) {
    Value at = b.create<arith::AddIOp>(
        loc, index,
        b.create<arith::ConstantIntOp>(loc, b.getI32Type(), offset));
    Value p = b.create<LLVM::GEPOp>(loc, base.getType(), b.getF32Type(), base,
                                    ValueRange{at});
    return b.create<LLVM::LoadOp>(loc, type, p, align);
  }
};

StageScales KernelLowering::stageScales(OpBuilder &b, Location loc,
                                        Value stage) {
  return {stageBuffer(b, loc, layout.sfaBase, layout.sfaBytes, stage),
          stageBuffer(b, loc, layout.sfbBase, layout.sfbBytes, stage),
          fragmentOf(b, loc, tid(b, loc), quadB)};
}

/// The sfb loads made so far from one stage: pairs by group j, quads by
/// group pair g.
struct SfbLoads {
  DenseMap<int64_t, Value> pairs, quads;
};

/// The sfb value (c) of tile group `j` from the stage, one load per pair or,
/// with quad-ordered B rows, per two groups when both lie in [lo, hi);
/// each load is made once.
static Value sfbValue(OpBuilder &b, Location loc, const StageScales &st,
                      int64_t j, int c, int64_t lo, int64_t hi,
                      SfbLoads &loaded) {
  auto at = [&](Value v, int64_t e) {
    return b.create<LLVM::ExtractElementOp>(
        loc, v, b.create<LLVM::ConstantOp>(loc, b.getI32Type(), e));
  };
  int64_t partner = j ^ 1;
  if (st.f.quads && partner >= lo && partner < hi) {
    Value &quad = loaded.quads[j / 2];
    if (!quad)
      quad = st.sfbQuadOf(b, loc, j / 2);
    return at(quad, 2 * (j % 2) + c);
  }
  Value &pair = loaded.pairs[j];
  if (!pair)
    pair = st.sfbPairOf(b, loc, j);
  return at(pair, c);
}

void KernelLowering::lowerLoadScales(LoadScalesOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  StageScales st = stageScales(b, loc, op.getStage());
  // [sfa(row), sfa(row + 8), sfb(col), sfb(col + 1), sfb(col + 8), ...]
  Value scales = b.create<LLVM::UndefOp>(loc, op.getScales().getType());
  for (int i = 0; i < 2; ++i)
    scales = b.create<LLVM::InsertElementOp>(loc, scales, st.sfaOf(b, loc, i),
                                             i32(b, loc, i));
  int64_t j0 = op.getColOffset() / 8;
  int64_t groups = (cast<VectorType>(op.getScales().getType()).getNumElements() - 2) / 2;
  SfbLoads loaded;
  for (int64_t j = 0; j < groups; ++j)
    for (int c = 0; c < 2; ++c) {
      Value v = sfbValue(b, loc, st, j0 + j, c, j0, j0 + groups, loaded);
      scales = b.create<LLVM::InsertElementOp>(loc, scales, v,
                                               i32(b, loc, 2 + 2 * j + c));
    }
  op.getScales().replaceAllUsesWith(scales);
  op.erase();
}

void KernelLowering::lowerPromote(PromoteOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // The slice's width and its first 8-column group in the tile.
  int64_t n = 2 * cast<VectorType>(op.getAcc().getType()).getNumElements();
  int64_t j0 = op.getColOffset() / 8;
  // The fragment: the WGMMA's struct, or a vector when it was loop-carried.
  auto cast = op.getAcc().getDefiningOp<UnrealizedConversionCastOp>();
  Value accStruct = cast ? cast.getOperand(0) : Value();
  auto element = [&](int64_t r) -> Value {
    if (accStruct)
      return b.create<LLVM::ExtractValueOp>(loc, accStruct, r);
    return b.create<LLVM::ExtractElementOp>(loc, op.getAcc(), i32(b, loc, r));
  };
  Type f32 = b.getF32Type();
  // Accumulator r, its read pinned after wgmma.wait_group (an empty asm that
  // "modifies" the register), as CUTLASS's warpgroup_fence_operand does.
  auto pinned = [&](int64_t r) -> Value {
    return b
        .create<LLVM::InlineAsmOp>(loc, f32, ValueRange{element(r)}, "",
                                   "=f,0", /*has_side_effects=*/true, false,
                                   LLVM::TailCallKind::None,
                                   LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  };
  // Either the registers dgemm.load_scales filled, or loads from the stage
  // issued here, one sfb pair per 8 columns, or registers for the first
  // columns and loads for the rest.
  Value scales = op.getScales();
  int64_t held =
      scales ? llvm::cast<VectorType>(scales.getType()).getNumElements() : 0;
  std::optional<StageScales> st;
  if (op.getStage())
    st = stageScales(b, loc, op.getStage());
  Value pair, quad, sa0, sa1;
  SfbLoads loaded;
  // The groups whose sfb values come from the stage: the slice's groups
  // after those held in registers (a quad load needs both of its groups
  // there).
  int64_t firstLoaded = j0 + (held > 2 ? (held - 2) / 2 : 0);
  // Index idx of the slice's scales: 2 sfa, then sfb pairs of its 8-column
  // groups (j0, j0 + 1, ...).
  auto scaleAt = [&](int64_t idx) -> Value {
    if (idx < held)
      return b.create<LLVM::ExtractElementOp>(loc, scales, i32(b, loc, idx));
    if (idx < 2)
      return st->sfaOf(b, loc, idx);
    int64_t j = (idx - 2) / 2, c = (idx - 2) % 2;
    if (sfbStride == 0)
      return c == 0 ? sa0 : sa1;
    if (sfbVec4 && c == 0 && j % 2 == 0) {
      quad = st->sfbAlignedQuadOf(b, loc, j0 + j);
      pair = Value();
    }
    if (sfbVec4 && quad) {
      int64_t at = 2 * (j % 2) + c;
      return b.create<LLVM::ExtractElementOp>(loc, quad, i32(b, loc, at));
    }
    if (sfbStride != 1) {
      if (c == 0 && j % sfbStride == 0)
        pair = st->sfbPairOf(b, loc, j0 + j);
      return b.create<LLVM::ExtractElementOp>(loc, pair, i32(b, loc, c));
    }
    return sfbValue(b, loc, *st, j0 + j, c, firstLoaded, j0 + n / 8, loaded);
  };
  Value sum = op.getSum();
  if (unscaledPromotion) {
    for (int64_t r = 0; r < n / 2; ++r) {
      Value idx = i32(b, loc, r);
      Value old = b.create<LLVM::ExtractElementOp>(loc, sum, idx);
      sum = b.create<LLVM::InsertElementOp>(
          loc, sum, b.create<LLVM::FAddOp>(loc, old, pinned(r)), idx);
    }
    op.getResult().replaceAllUsesWith(sum);
    op.erase();
    if (cast && cast.use_empty())
      cast.erase();
    return;
  }
  Value sa[2] = {scaleAt(0), scaleAt(1)};
  sa0 = sa[0];
  sa1 = sa[1];
  for (int64_t j = 0; j < n / 8; ++j) {
    Value sb[2] = {scaleAt(2 + 2 * j), scaleAt(2 + 2 * j + 1)};
    for (int i = 0; i < 2; ++i)
      for (int c = 0; c < 2; ++c) {
        int64_t r = j * 4 + i * 2 + c;
        Value a = pinned(r);
        Value scale = b.create<LLVM::FMulOp>(loc, sa[i], sb[c]);
        Value idx = i32(b, loc, r);
        Value old = b.create<LLVM::ExtractElementOp>(loc, sum, idx);
        Value nv = b.create<LLVM::FMAOp>(loc, a, scale, old);
        sum = b.create<LLVM::InsertElementOp>(loc, sum, nv, idx);
      }
  }
  op.getResult().replaceAllUsesWith(sum);
  op.erase();
  if (cast && cast.use_empty())
    cast.erase();
}

/// The number of 128-deep blocks of the tile `op` finishes, from the block
/// loop(s) that feed it (dgemm-lower-to-kernel's structure); null if the
/// structure is not recognized.
Value KernelLowering::tileBlocks(ValueRange sums, Value blocks) {
  if (blocks)
    return blocks;
  Value sum = sums.front();
  // narrow-tail-mma: the block loops of each width run the same blocks;
  // the full-width ones are in the last else region.
  while (auto narrow = sum.getDefiningOp<scf::IfOp>()) {
    if (!narrow->hasAttr("dgemm.narrow_tail"))
      break;
    auto result = cast<OpResult>(sum);
    sum = narrow.elseYield().getOperand(result.getResultNumber());
  }
  if (auto tile = sum.getDefiningOp<scf::IfOp>()) {
    auto cmp = tile.getCondition().getDefiningOp<arith::CmpIOp>();
    return cmp ? cmp.getLhs() : Value();
  }
  if (auto kloop = sum.getDefiningOp<scf::ForOp>())
    return kloop.getUpperBound();
  return Value();
}

/// Prefetches the tile's c (= d when accumulating in place) into L2 while the
/// block loop runs, so that the epilogue's reads (or the TMA reduce-adds)
/// find it there: every math thread prefetches a few of its warpgroup's
/// 128-byte lines when block max(0, blocks - prefetchCBlocks) is issued
/// (when the tile starts for prefetchCBlocks = 0), and only for tiles of at
/// most prefetchCMaxBlocks blocks (0: every tile), whose epilogue is a large
/// share of the tile's time.
///
/// The block loops say which blocks they issue (`dgemm.first_block` = [per,
/// first]: iteration i issues blocks per * i + first onwards, blocks before
/// `first` are issued before the loop); the prefetch goes into the iteration
/// that issues block `at`, or before the loop if that block is issued there.
void KernelLowering::prefetchC(Operation *op, ValueRange sums,
                               Value deferredBlocks, Value group,
                               Value mBlock, Value nBlock) {
  // A deferred epilogue (dgemm-lower-to-kernel's defer-epilogue) runs in a
  // later tile; the lowering prefetched its c with dgemm.prefetch_c.
  if (deferredBlocks)
    return;
  Value numBlocks = tileBlocks(sums, Value());
  SmallVector<scf::ForOp> loops;
  for (Operation &prev : *op->getBlock()) {
    if (&prev == op)
      break;
    prev.walk([&](scf::ForOp loop) {
      if (loop->hasAttr("dgemm.first_block"))
        loops.push_back(loop);
    });
  }
  if (!numBlocks || loops.empty())
    return;
  Location loc = op->getLoc();
  // Prefetches under `cond` (none: always) at `b`'s insertion point.
  auto prefetchAt = [&](OpBuilder &b, Value cond) {
    if (prefetchCMaxBlocks > 0) {
      Value shortTile =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, numBlocks,
                                  i32(b, loc, prefetchCMaxBlocks));
      cond = cond ? b.create<arith::AndIOp>(loc, cond, shortTile).getResult()
                  : shortTile;
    }
    if (cond) {
      auto when = b.create<scf::IfOp>(loc, cond, /*withElse=*/false);
      b.setInsertionPoint(when.thenBlock()->getTerminator());
    }
    emitPrefetch(b, loc, group, mBlock, nBlock);
  };
  auto blockAt = [&](OpBuilder &b) -> Value {
    return b.create<arith::MaxSIOp>(
        loc,
        b.create<arith::SubIOp>(loc, numBlocks, i32(b, loc, prefetchCBlocks)),
        i32(b, loc, 0));
  };
  if (prefetchCBlocks == 0) { // once, before the first loop
    // Not for a tile without K blocks: its epilogue touches nothing (an
    // empty group in place), so its c would be read from memory for nothing.
    OpBuilder b(loops.front());
    prefetchAt(b, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                          numBlocks, i32(b, loc, 0)));
    return;
  }
  for (scf::ForOp loop : loops) {
    auto shape = loop->getAttrOfType<ArrayAttr>("dgemm.first_block");
    int64_t per = cast<IntegerAttr>(shape[0]).getInt();
    int64_t first = cast<IntegerAttr>(shape[1]).getInt();
    if (first > 0) {
      OpBuilder b(loop);
      prefetchAt(b, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                            blockAt(b), i32(b, loc, first)));
    }
    OpBuilder b(loop.getBody(), loop.getBody()->begin());
    Value at = blockAt(b);
    Value from = loop.getInductionVar();
    if (per != 1)
      from = b.create<arith::MulIOp>(loc, from, i32(b, loc, per));
    if (first != 0)
      from = b.create<arith::AddIOp>(loc, from, i32(b, loc, first));
    prefetchAt(b, b.create<arith::AndIOp>(
                      loc,
                      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge,
                                              at, from),
                      b.create<arith::CmpIOp>(
                          loc, arith::CmpIPredicate::ult, at,
                          b.create<arith::AddIOp>(loc, from,
                                                  i32(b, loc, per)))));
  }
}

void KernelLowering::lowerPrefetchC(PrefetchCOp op) {
  OpBuilder b(op);
  auto when = b.create<scf::IfOp>(op.getLoc(), op.getValid(),
                                  /*withElse=*/false);
  OpBuilder tb = when.getThenBodyBuilder();
  emitPrefetch(tb, op.getLoc(), op.getGroup(), op.getMBlock(),
               op.getNBlock());
  op.erase();
}

void KernelLowering::emitPrefetch(OpBuilder &b, Location loc, Value group,
                                  Value mBlock, Value nBlock) {
  auto c = [&](int64_t v) { return i32(b, loc, v); };
  auto ext = [&](Value v) {
    return b.create<arith::ExtUIOp>(loc, b.getI64Type(), v).getResult();
  };
  int64_t lines = (config.getBlockN() * 4 + 127) / 128;
  Value t = tid(b, loc);
  Value wg = b.create<arith::SubIOp>(
      loc, b.create<arith::DivUIOp>(loc, t, c(128)), c(1));
  Value inWg = b.create<arith::RemUIOp>(loc, t, c(128));
  Value rowBase = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, mBlock, c(config.getBlockM())),
      b.create<arith::MulIOp>(loc, wg, c(64)));
  Value nBase = b.create<arith::MulIOp>(loc, nBlock, c(config.getBlockN()));
  Value m = arg(KernelOp::DimM), n = arg(KernelOp::DimN);
  Value groupRows = b.create<arith::MulIOp>(loc, ext(group), ext(m));
  for (int64_t r = 0; r * 128 < 64 * lines; ++r) {
    Value idx = b.create<arith::AddIOp>(loc, inWg, c(128 * r));
    Value row = b.create<arith::AddIOp>(
        loc, rowBase, b.create<arith::DivUIOp>(loc, idx, c(lines)));
    Value col = b.create<arith::AddIOp>(
        loc, nBase,
        b.create<arith::MulIOp>(
            loc, b.create<arith::RemUIOp>(loc, idx, c(lines)), c(32)));
    Value ok = b.create<arith::AndIOp>(
        loc,
        b.create<arith::AndIOp>(
            loc,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, idx,
                                    c(64 * lines)),
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, m)),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, n));
    Value off = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(
            loc, b.create<arith::AddIOp>(loc, groupRows, ext(row)), ext(n)),
        ext(col));
    Value ptr = b.create<LLVM::GEPOp>(loc, globalPtr(), b.getF32Type(),
                                      arg(KernelOp::PtrC), ValueRange{off});
    auto guard = b.create<scf::IfOp>(loc, ok, /*withElse=*/false);
    OpBuilder gb = guard.getThenBodyBuilder();
    inlinePtx(
        gb, loc, "prefetch.global.L2 [$0];", "l",
        ValueRange{gb.create<LLVM::AddrSpaceCastOp>(loc, genericPtr(), ptr)
                       .getResult()});
  }
}

/// unsafe-skip-epilogue: moves `op` under a guard that is false at run time
/// (the runtime never passes a null workspace) but not to the compilers.
void KernelLowering::behindNullWorkspace(Operation *op) {
  OpBuilder gb(op);
  Value ws = gb.create<LLVM::PtrToIntOp>(op->getLoc(), gb.getI64Type(),
                                         arg(KernelOp::PtrWorkspace));
  auto never = gb.create<scf::IfOp>(
      op->getLoc(),
      gb.create<arith::CmpIOp>(op->getLoc(), arith::CmpIPredicate::eq, ws,
                               i64(gb, op->getLoc(), 0)),
      /*withElseRegion=*/false);
  op->moveBefore(never.thenBlock()->getTerminator());
}

void KernelLowering::lowerEpilogue(EpilogueOp op) {
  if (prefetchCBlocks >= 0)
    prefetchC(op, op.getSums(), op.getBlocks(), op.getGroup(), op.getMBlock(),
              op.getNBlock());
  // unsafe-skip-epilogue: a guard that is false at run time (the runtime
  // never passes a null workspace) but not to the compilers, so that the
  // sums stay live (a removed epilogue would let the promotions go too).
  if (skipEpilogue)
    behindNullWorkspace(op);
  OpBuilder b(op);
  Location loc = op.getLoc();
  int64_t n = config.getBlockN();
  Fragment f = fragmentOf(b, loc, tid(b, loc), quadB);
  Value m = arg(KernelOp::DimM), nDim = arg(KernelOp::DimN);
  Value mBase = b.create<arith::MulIOp>(loc, op.getMBlock(),
                                        i32(b, loc, config.getBlockM()));
  Value nBase = b.create<arith::MulIOp>(loc, op.getNBlock(),
                                        i32(b, loc, config.getBlockN()));
  Value row0 = b.create<arith::AddIOp>(loc, mBase, f.rowInTile);
  Value col0 = b.create<arith::AddIOp>(loc, nBase, f.colInTile);
  auto ext = [&](OpBuilder &bb, Value v) {
    return bb.create<arith::ExtUIOp>(loc, bb.getI64Type(), v).getResult();
  };
  Type f32 = b.getF32Type();
  auto v2 = VectorType::get({2}, f32);
  Value groupRows = b.create<arith::MulIOp>(loc, ext(b, op.getGroup()), ext(b, m));

  // Element offset of (row0 + 8i, col0 + 8j) in c/d. The column is added in
  // 64 bits, so that LLVM folds 8j into the address whatever it knows of
  // the n-block (a 32-bit sum it cannot prove free of wrapping costs a
  // 64-bit address per chunk, and spills in the wide tiles).
  auto offsetOf = [&](OpBuilder &bb, int i, int64_t j) {
    Value row = bb.create<arith::AddIOp>(loc, row0, i32(bb, loc, 8 * i));
    Value rowOff = bb.create<arith::MulIOp>(
        loc, bb.create<arith::AddIOp>(loc, groupRows, ext(bb, row)),
        ext(bb, nDim));
    Value col = bb.create<arith::AddIOp>(
        loc, ext(bb, col0),
        bb.create<arith::ConstantIntOp>(loc, bb.getI64Type(), f.colOf(j)));
    return bb.create<arith::AddIOp>(loc, rowOff, col).getResult();
  };
  SumPairs sums(op.getSums());
  auto mine = [&](OpBuilder &bb, int i, int64_t j) {
    return sums.pair(bb, loc, i, j);
  };
  auto ptrAt = [&](OpBuilder &bb, KernelOp::Arg base, Value off) {
    return bb.create<LLVM::GEPOp>(loc, globalPtr(), f32, arg(base),
                                  ValueRange{off});
  };

  // Default: every C load of the thread is issued before the first add, so
  // their latencies overlap. Interior tiles (all but the last row/column of
  // tiles when M or N is not a multiple of the block) need no guard at all;
  // an edge tile clamps the address of an out-of-range chunk to element 0
  // (always valid) for its load and guards only the store, so it stays as
  // fast as an interior one.
  Value fullRows = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ule,
      b.create<arith::AddIOp>(loc, mBase, i32(b, loc, config.getBlockM())), m);
  Value fullCols = b.create<arith::CmpIOp>(
      loc, arith::CmpIPredicate::ule,
      b.create<arith::AddIOp>(loc, nBase, i32(b, loc, n)), nDim);
  Value interior = b.create<arith::AndIOp>(loc, fullRows, fullCols);
  // Whether chunk (i, j) lies inside M x N. N is a multiple of 4 and the
  // column even, so col < N covers col + 1 too.
  auto inBounds = [&](OpBuilder &bb, int i, int64_t j) {
    Value row = bb.create<arith::AddIOp>(loc, row0, i32(bb, loc, 8 * i));
    Value col = bb.create<arith::AddIOp>(loc, col0, i32(bb, loc, f.colOf(j)));
    return bb.create<arith::AndIOp>(
        loc, bb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, m),
        bb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, nDim))
        .getResult();
  };
  // 16-byte accesses (epilogue-vector-width = 4, red-vector-width = 4):
  // lanes q and q ^ 1 of a quad (q = lane % 4) swap half of their sums with
  // one shuffle per element, so that an even lane holds 4 consecutive columns
  // of row r and an odd lane 4 of row r + 8 in every 8-column group. The 4
  // columns start at a multiple of 4 and N is one, so they lie inside N
  // together and 16-byte alignment holds. Every lane shuffles; guards cover
  // the memory accesses only.
  struct QuadPairRows {
    Value odd;    ///< lane is odd: it takes row r + 8
    Value colSel; ///< first of its 4 columns in 8-column group 0
    Value rowOff; ///< element offset of its row
    Value first;  ///< element offset of column colSel in that row
    Value rowOk;  ///< its row lies inside M
  };
  auto quadPairRows = [&](OpBuilder &t) {
    Value lane = t.create<arith::RemUIOp>(loc, tid(t, loc), i32(t, loc, 32));
    Value odd = t.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ne,
        t.create<arith::AndIOp>(loc, lane, i32(t, loc, 1)), i32(t, loc, 0));
    Value rowSel = t.create<arith::SelectOp>(
        loc, odd, t.create<arith::AddIOp>(loc, row0, i32(t, loc, 8)), row0);
    Value colSel = t.create<arith::SelectOp>(
        loc, odd, t.create<arith::SubIOp>(loc, col0, i32(t, loc, 2)), col0);
    Value rowOff = t.create<arith::MulIOp>(
        loc, t.create<arith::AddIOp>(loc, groupRows, ext(t, rowSel)),
        ext(t, nDim));
    return QuadPairRows{
        odd, colSel, rowOff,
        t.create<arith::AddIOp>(loc, rowOff, ext(t, colSel)),
        t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, rowSel, m)};
  };
  // The thread's 4 sums of 8-column group j after the swap.
  auto swapped = [&](OpBuilder &t, const QuadPairRows &q, int64_t j) {
    Value all = t.create<arith::ConstantIntOp>(loc, t.getI32Type(), -1);
    Value top = mine(t, 0, j), bottom = mine(t, 1, j);
    Value give = t.create<arith::SelectOp>(loc, q.odd, top, bottom);
    Value kept = t.create<arith::SelectOp>(loc, q.odd, bottom, top);
    Value got[2], keep[2];
    for (int e = 0; e < 2; ++e) {
      Value x = t.create<LLVM::ExtractElementOp>(loc, give, i32(t, loc, e));
      got[e] = t.create<NVVM::ShflOp>(loc, f32, all, x, i32(t, loc, 1),
                                      i32(t, loc, 0x1f), NVVM::ShflKind::bfly,
                                      UnitAttr());
      keep[e] = t.create<LLVM::ExtractElementOp>(loc, kept, i32(t, loc, e));
    }
    // Even lane: its row-r pair, then the odd neighbour's. Odd lane: the
    // even neighbour's row-(r + 8) pair, then its own.
    Value out = t.create<LLVM::UndefOp>(loc, VectorType::get({4}, f32));
    for (int e = 0; e < 2; ++e) {
      out = t.create<LLVM::InsertElementOp>(
          loc, out, t.create<arith::SelectOp>(loc, q.odd, got[e], keep[e]),
          i32(t, loc, e));
      out = t.create<LLVM::InsertElementOp>(
          loc, out, t.create<arith::SelectOp>(loc, q.odd, keep[e], got[e]),
          i32(t, loc, 2 + e));
    }
    return out;
  };
  // Whether group j's 4 columns of the thread's row lie inside M x N.
  auto wideInBounds = [&](OpBuilder &t, const QuadPairRows &q, int64_t j) {
    Value col = t.create<arith::AddIOp>(loc, q.colSel, i32(t, loc, 8 * j));
    return t.create<arith::AndIOp>(
        loc, q.rowOk,
        t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, nDim))
        .getResult();
  };
  // Group j's offset is the thread's first one plus 8j (a constant, so it
  // folds into the address instead of taking registers).
  auto wideOffset = [&](OpBuilder &t, const QuadPairRows &q, int64_t j) {
    return t
        .create<arith::AddIOp>(
            loc, q.first,
            t.create<arith::ConstantIntOp>(loc, t.getI64Type(), 8 * j))
        .getResult();
  };
  // Quad-ordered B rows: the thread's sums of groups 2g and 2g + 1 in row
  // half i are 4 consecutive columns (col0 + 16g ...), accessed 16 bytes at
  // a time without shuffles. N is a multiple of 4 and so is the column, so
  // col < N covers all 4.
  auto quadOf = [&](OpBuilder &t, int i, int64_t g) {
    Value lo = mine(t, i, 2 * g), hi = mine(t, i, 2 * g + 1);
    Value out = t.create<LLVM::UndefOp>(loc, VectorType::get({4}, f32));
    for (int e = 0; e < 4; ++e)
      out = t.create<LLVM::InsertElementOp>(
          loc, out,
          t.create<LLVM::ExtractElementOp>(loc, e < 2 ? lo : hi,
                                           i32(t, loc, e % 2)),
          i32(t, loc, e));
    return out;
  };
  // Element offset of the thread's first column in row half i; group pair g
  // adds 16g (a constant, folded into the address).
  auto quadRowOffset = [&](OpBuilder &t, int i) {
    Value row = t.create<arith::AddIOp>(loc, row0, i32(t, loc, 8 * i));
    Value rowOff = t.create<arith::MulIOp>(
        loc, t.create<arith::AddIOp>(loc, groupRows, ext(t, row)),
        ext(t, nDim));
    return t.create<arith::AddIOp>(loc, rowOff, ext(t, col0)).getResult();
  };
  auto quadInBounds = [&](OpBuilder &t, int i, int64_t g) {
    Value row = t.create<arith::AddIOp>(loc, row0, i32(t, loc, 8 * i));
    Value col = t.create<arith::AddIOp>(loc, col0, i32(t, loc, 16 * g));
    return t.create<arith::AndIOp>(
        loc, t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, m),
        t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, nDim))
        .getResult();
  };
  // d = c + sum over the thread's chunks of `width` floats: every load of c
  // first (their latencies overlap; out of range, a guarded chunk loads
  // element 0), then per chunk the add and the store, guarded by `ok`. The
  // chunk's offset, bound and sum are built in that order; a sum that
  // shuffles between lanes is built before the guard, so that every lane
  // takes part.
  struct Chunk {
    std::function<Value(OpBuilder &)> offset, inBounds, sum;
  };
  // False while the copy of an empty tile is built: c is stored to d as it
  // was loaded, without the sums (see below).
  bool addSums = true;
  auto addChunks = [&](OpBuilder &t, bool guarded, int64_t width,
                       int64_t count, function_ref<Chunk(int64_t)> chunkAt,
                       bool sumBeforeGuard) {
    Value zero64 = t.create<arith::ConstantIntOp>(loc, t.getI64Type(), 0);
    auto vt = VectorType::get({width}, f32);
    unsigned align = 4 * width;
    SmallVector<Value> offs, oks, cs;
    for (int64_t k = 0; k < count; ++k) {
      Chunk chunk = chunkAt(k);
      Value off = chunk.offset(t);
      Value loadOff = off;
      if (guarded) {
        oks.push_back(chunk.inBounds(t));
        loadOff = t.create<arith::SelectOp>(loc, oks.back(), off, zero64);
      }
      offs.push_back(off);
      cs.push_back(t.create<LLVM::LoadOp>(
          loc, vt, ptrAt(t, KernelOp::PtrC, loadOff), align));
    }
    for (int64_t k = 0; k < count; ++k) {
      Chunk chunk = chunkAt(k);
      Value out = sumBeforeGuard && addSums ? chunk.sum(t) : Value();
      OpBuilder sb = t;
      if (guarded)
        sb = t.create<scf::IfOp>(loc, oks[k], /*withElseRegion=*/false)
                 .getThenBodyBuilder();
      if (!out && addSums)
        out = chunk.sum(sb);
      Value to = ptrAt(sb, KernelOp::PtrD, offs[k]);
      Value value = addSums ? sb.create<LLVM::FAddOp>(loc, cs[k], out).getResult()
                            : cs[k];
      sb.create<LLVM::StoreOp>(loc, value, to, align);
    }
  };
  // Quad-ordered B: chunk (i, g) is row half i's 4 columns col0 + 16g.
  auto batchedQuads = [&](OpBuilder &t, bool guarded) {
    Value first[2];
    int64_t pairs = n / 16;
    addChunks(
        t, guarded, 4, 2 * pairs,
        [&](int64_t k) -> Chunk {
          int i = int(k / pairs);
          int64_t g = k % pairs;
          return {[&, i, g](OpBuilder &bb) -> Value {
                    if (g == 0)
                      first[i] = quadRowOffset(bb, i);
                    return bb.create<arith::AddIOp>(
                        loc, first[i],
                        bb.create<arith::ConstantIntOp>(loc, bb.getI64Type(),
                                                        16 * g));
                  },
                  [&, i, g](OpBuilder &bb) { return quadInBounds(bb, i, g); },
                  [&, i, g](OpBuilder &bb) { return quadOf(bb, i, g); }};
        },
        /*sumBeforeGuard=*/false);
  };
  // epilogue-vector-width = 4: all 16-byte loads of c first (their latencies
  // overlap), then per 8-column group the swap, the add and the store, so
  // that no more than the sums and the loaded c are live at once.
  auto batchedWide = [&](OpBuilder &t, bool guarded) {
    QuadPairRows q = quadPairRows(t);
    addChunks(
        t, guarded, 4, n / 8,
        [&](int64_t j) -> Chunk {
          return {[&, j](OpBuilder &bb) { return wideOffset(bb, q, j); },
                  [&, j](OpBuilder &bb) { return wideInBounds(bb, q, j); },
                  [&, j](OpBuilder &bb) { return swapped(bb, q, j); }};
        },
        /*sumBeforeGuard=*/true);
  };
  auto batched = [&](OpBuilder &t, bool guarded) {
    if (quadB)
      return batchedQuads(t, guarded);
    if (epilogueVectorWidth == 4)
      return batchedWide(t, guarded);
    int64_t groups = n / 8;
    addChunks(
        t, guarded, 2, 2 * groups,
        [&](int64_t k) -> Chunk {
          int i = int(k / groups);
          int64_t j = k % groups;
          return {[&, i, j](OpBuilder &bb) { return offsetOf(bb, i, j); },
                  [&, i, j](OpBuilder &bb) { return inBounds(bb, i, j); },
                  [&, i, j](OpBuilder &bb) { return mine(bb, i, j); }};
        },
        /*sumBeforeGuard=*/false);
  };
  // Whether c and d are the same tensor (accumulate in place).
  // Built once, where it is first asked for: every later use is nested
  // below that point.
  Value sameCD;
  auto inPlaceCond = [&]() -> Value {
    if (sameCD)
      return sameCD;
    auto asInt = [&](KernelOp::Arg ptr) {
      return b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), arg(ptr))
          .getResult();
    };
    sameCD = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq,
                                    asInt(KernelOp::PtrC),
                                    asInt(KernelOp::PtrD));
    return sameCD;
  };
  // A tile without K blocks (a group with K = 0) has nothing to add: in
  // place, d already is c and the tile touches nothing; with a separate c it
  // copies c to d as loaded. d stays bitwise c either way (c + 0 would turn
  // -0.0 into +0.0), and an in-place call does not move an empty group's
  // output through the SMs at all. The in-place kernel's reductions already
  // skip such tiles (below), its TMA reduce-adds do not; where the block
  // count is not known here, every tile takes the paths below.
  if (!inPlaceOnly || tmaReduceEpilogue) {
    if (Value tb = tileBlocks(op.getSums(), op.getBlocks())) {
      Value separateC = b.create<arith::XOrIOp>(
          loc, inPlaceCond(),
          b.create<arith::ConstantIntOp>(loc, b.getI1Type(), 1));
      auto empty = b.create<scf::IfOp>(
          loc,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tb,
                                  i32(b, loc, 0)),
          /*withElseRegion=*/true);
      OpBuilder eb = empty.getThenBodyBuilder();
      auto copy =
          eb.create<scf::IfOp>(loc, separateC, /*withElseRegion=*/false);
      OpBuilder cb = copy.getThenBodyBuilder();
      auto full = cb.create<scf::IfOp>(loc, interior, /*withElseRegion=*/true);
      addSums = false;
      OpBuilder ct = full.getThenBodyBuilder();
      batched(ct, /*guarded=*/false);
      OpBuilder ce = full.getElseBodyBuilder();
      batched(ce, /*guarded=*/true);
      addSums = true;
      b.setInsertionPoint(empty.elseBlock()->getTerminator());
    }
  }
  // In place (c == d): TMA reduce-add through shared memory; the register
  // path below stays for a separate c.
  if (tmaReduceEpilogue) {
    auto split =
        b.create<scf::IfOp>(loc, inPlaceCond(), /*withElseRegion=*/true);
    OpBuilder rb = split.getThenBodyBuilder();
    reduceEpilogue(rb, loc, op, mine);
    b.setInsertionPoint(split.elseBlock()->getTerminator());
  }
  // In place (c == d): each chunk is added to d by a vector reduction in L2
  // (red.global.add.v2.f32), so nothing of c is read into the SM and the
  // warps do not wait for it. Exactly one reduction reaches each element, so
  // d + sum is rounded once and the result is deterministic (subnormal values
  // may be flushed, which the register path does not do).
  //
  // With red-epilogue-max-blocks = B > 0 only tiles of at most B blocks take
  // this path: on the H200 it made short tiles faster (their epilogue does not
  // wait for c any more) and long ones slower (bench/NOTES.md).
  bool needsBlocks = redEpilogueMaxBlocks > 0 || inPlaceOnly;
  Value blocks =
      needsBlocks ? tileBlocks(op.getSums(), op.getBlocks()) : Value();
  if (redEpilogue && !tmaReduceEpilogue && needsBlocks && !blocks) {
    // Left unlowered, which fails the conversion.
    op.emitOpError(inPlaceOnly ? "the in-place kernel"
                               : "the reduction epilogue's bound")
        << " needs the tile's block count, but the sums do not come from a "
           "block loop of dgemm-lower-to-kernel";
    return;
  }
  if (redEpilogue && !tmaReduceEpilogue) {
    // In-place kernel: c is d (the runtime launches it for nothing else)
    // and every tile with K blocks reduces; there is no register path. A
    // tile without K blocks leaves d (= c) alone.
    Value inPlace =
        inPlaceOnly ? b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                              blocks, i32(b, loc, 0))
                          .getResult()
                    : inPlaceCond();
    // 1 <= blocks <= B (blocks - 1 wraps for 0): a tile without K blocks
    // (an empty group) keeps the register path, which leaves d = c exact
    // where a reduction of 0 would flush subnormal values.
    if (blocks && !inPlaceOnly)
      inPlace = b.create<arith::AndIOp>(
          loc, inPlace,
          b.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::ult,
              b.create<arith::SubIOp>(loc, blocks, i32(b, loc, 1)),
              i32(b, loc, redEpilogueMaxBlocks)));
    auto split = b.create<scf::IfOp>(loc, inPlace, /*withElseRegion=*/true);
    // red-vector-width = 4: one 16-byte reduction per 8-column group of the
    // swapped sums (see quadPairRows) instead of two 8-byte ones.
    auto reduceWide = [&](OpBuilder &t, bool guarded) {
      QuadPairRows q = quadPairRows(t);
      for (int64_t j = 0; j < n / 8; ++j) {
        Value out = swapped(t, q, j);
        OpBuilder sb = t;
        if (guarded)
          sb = t.create<scf::IfOp>(loc, wideInBounds(t, q, j),
                                   /*withElseRegion=*/false)
                   .getThenBodyBuilder();
        // A deferred epilogue runs while the next tile's WGMMAs hold their
        // fragment's registers: every reduction addresses the thread's
        // first group plus an immediate (32 bytes per group), so that one
        // address register serves them all. Otherwise each group's address
        // is computed on its own (the form measured as the default).
        Value addr;
        std::string asmText = "red.global.add.v4.f32 [$0], {$1, $2, $3, $4};";
        if (op.getBlocks()) {
          addr = sb.create<LLVM::PtrToIntOp>(
              loc, sb.getI64Type(), ptrAt(sb, KernelOp::PtrD, q.first));
          asmText = "red.global.add.v4.f32 [$0+" + std::to_string(32 * j) +
                    "], {$1, $2, $3, $4};";
        } else {
          Value col =
              sb.create<arith::AddIOp>(loc, q.colSel, i32(sb, loc, 8 * j));
          Value off = sb.create<arith::AddIOp>(loc, q.rowOff, ext(sb, col));
          addr = sb.create<LLVM::PtrToIntOp>(loc, sb.getI64Type(),
                                             ptrAt(sb, KernelOp::PtrD, off));
        }
        SmallVector<Value> operands = {addr};
        for (int e = 0; e < 4; ++e)
          operands.push_back(
              sb.create<LLVM::ExtractElementOp>(loc, out, i32(sb, loc, e)));
        inlinePtx(sb, loc, asmText, "l,f,f,f,f,~{memory}", operands);
      }
    };
    // Quad-ordered B rows: one 16-byte reduction per 4 consecutive columns,
    // addressed from the row's first one plus an immediate (64 bytes per
    // group pair), with no shuffles.
    auto reduceQuads = [&](OpBuilder &t, bool guarded) {
      for (int i = 0; i < 2; ++i) {
        Value first = quadRowOffset(t, i);
        for (int64_t g = 0; g < n / 16; ++g) {
          OpBuilder sb = t;
          if (guarded)
            sb = t.create<scf::IfOp>(loc, quadInBounds(t, i, g),
                                     /*withElseRegion=*/false)
                     .getThenBodyBuilder();
          Value addr = sb.create<LLVM::PtrToIntOp>(
              loc, sb.getI64Type(), ptrAt(sb, KernelOp::PtrD, first));
          std::string asmText = "red.global.add.v4.f32 [$0+" +
                                std::to_string(64 * g) +
                                "], {$1, $2, $3, $4};";
          Value out = quadOf(sb, i, g);
          SmallVector<Value> operands = {addr};
          for (int e = 0; e < 4; ++e)
            operands.push_back(sb.create<LLVM::ExtractElementOp>(
                loc, out, i32(sb, loc, e)));
          inlinePtx(sb, loc, asmText, "l,f,f,f,f,~{memory}", operands);
        }
      }
    };
    auto reduce = [&](OpBuilder &t, bool guarded) {
      if (quadB)
        return reduceQuads(t, guarded);
      if (redVectorWidth == 4)
        return reduceWide(t, guarded);
      for (int i = 0; i < 2; ++i)
        for (int64_t j = 0; j < n / 8; ++j) {
          OpBuilder sb = t;
          if (guarded)
            sb = t.create<scf::IfOp>(loc, inBounds(t, i, j),
                                     /*withElseRegion=*/false)
                     .getThenBodyBuilder();
          Value v = mine(sb, i, j);
          Value addr = sb.create<LLVM::PtrToIntOp>(
              loc, sb.getI64Type(),
              ptrAt(sb, KernelOp::PtrD, offsetOf(sb, i, j)));
          Value lo = sb.create<LLVM::ExtractElementOp>(loc, v, i32(sb, loc, 0));
          Value hi = sb.create<LLVM::ExtractElementOp>(loc, v, i32(sb, loc, 1));
          inlinePtx(sb, loc, "red.global.add.v2.f32 [$0], {$1, $2};",
                    "l,f,f,~{memory}", ValueRange{addr, lo, hi});
        }
    };
    OpBuilder rb = split.getThenBodyBuilder();
    auto full = rb.create<scf::IfOp>(loc, interior, /*withElseRegion=*/true);
    OpBuilder t = full.getThenBodyBuilder();
    reduce(t, /*guarded=*/false);
    OpBuilder e = full.getElseBodyBuilder();
    reduce(e, /*guarded=*/true);
    if (inPlaceOnly) {
      op.erase();
      return;
    }
    b.setInsertionPoint(split.elseBlock()->getTerminator());
  }
  if (!perChunkEpilogue) {
    auto full = b.create<scf::IfOp>(loc, interior, /*withElseRegion=*/true);
    OpBuilder t = full.getThenBodyBuilder();
    batched(t, /*guarded=*/false);
    OpBuilder e = full.getElseBodyBuilder();
    batched(e, /*guarded=*/true);
    op.erase();
    return;
  }
  // The per-chunk form (kept for comparison): each 2-element chunk guarded,
  // its load, add and store in turn.
  for (int i = 0; i < 2; ++i)
    for (int64_t j = 0; j < n / 8; ++j) {
      auto ifOk = b.create<scf::IfOp>(loc, inBounds(b, i, j),
                                      /*withElseRegion=*/false);
      OpBuilder t = ifOk.getThenBodyBuilder();
      Value off = offsetOf(t, i, j);
      Value cv = t.create<LLVM::LoadOp>(loc, v2, ptrAt(t, KernelOp::PtrC, off),
                                        /*align=*/8);
      t.create<LLVM::StoreOp>(loc,
                              t.create<LLVM::FAddOp>(loc, cv, mine(t, i, j)),
                              ptrAt(t, KernelOp::PtrD, off), /*align=*/8);
    }
  op.erase();
}

/// d[group] += sum through shared memory: each math warpgroup writes its 64
/// rows `chunkCols` columns at a time into one of its buffers and one thread
/// adds the buffer to d with `cp.reduce.async.bulk.tensor`, one 64 x 8 box
/// (32-byte rows, SWIZZLE_32B) per 8 columns; the add happens in L2 and
/// out-of-range rows and columns are clipped by the d map. The math threads go
/// on to the next tile while the stores drain. Each element of d is added to
/// exactly once per launch, so the result is deterministic.
///
/// Ordering inside the epilogue (fixed here, not placed by dgemm-place-sync,
/// since no other op touches the buffers or d), with B buffers:
///   write chunk q -> fence.proxy.async (generic writes before the async
///   proxy's reads) -> issuer: cp.async.bulk.wait_group.read B-2 (chunk
///   q-B+1 has been read, so its buffer may be rewritten by chunk q+1) ->
///   bar.sync of the warpgroup -> issuer: reduce chunk q, commit.
/// When B does not divide the chunk count, the next tile's chunk 0 may reuse
/// a buffer still being read, so the tile starts with a full wait and a
/// barrier then.
void KernelLowering::reduceEpilogue(
    OpBuilder &b, Location loc, EpilogueOp op,
    function_ref<Value(OpBuilder &, int, int64_t)> mine) {
  auto c = [&](int64_t v) { return i32(b, loc, v); };
  constexpr int64_t kBoxCols = 8, kBoxBytes = 64 * kBoxCols * 4;
  const int64_t wgBytes = SmemLayout::kBuffers * SmemLayout::kBufferBytes;
  const int64_t boxesPerChunk = epilogueChunkCols / kBoxCols;
  const int64_t chunkBytes = boxesPerChunk * kBoxBytes;
  const int64_t buffers = wgBytes / chunkBytes;
  const int64_t chunks = config.getBlockN() / epilogueChunkCols;

  Value t = tid(b, loc);
  Value wg =
      b.create<LLVM::SubOp>(loc, b.create<LLVM::UDivOp>(loc, t, c(128)), c(1));
  Value inWg = b.create<LLVM::URemOp>(loc, t, c(128));
  Value lane = b.create<LLVM::URemOp>(loc, t, c(32));
  Value warp = b.create<LLVM::UDivOp>(loc, inWg, c(32));
  // Named barriers 1..W are the turns (lowerTurn).
  Value barId =
      b.create<LLVM::AddOp>(loc, wg, c(1 + config.getMathWarpgroups()));
  // The issuer's instructions are predicated inside one asm statement with
  // the barrier: as separate branches, LLVM may duplicate the bar.sync into
  // both sides, and lanes of one warp at different bar.sync instructions is
  // undefined for the aligned barrier.
  auto waitReadThenSync = [&](int64_t pending, StringRef thenOnIssuer,
                              ValueRange extra, StringRef extraConstraints) {
    std::string ptx =
        ("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, $0, 0;\n\t"
         "@p cp.async.bulk.wait_group.read " +
         Twine(pending) + ";\n\tbar.sync $1, 128;\n\t" + thenOnIssuer + "}")
            .str();
    SmallVector<Value> operands{inWg, barId};
    operands.append(extra.begin(), extra.end());
    inlinePtx(b, loc, ptx, ("r,r," + extraConstraints + "~{memory}").str(),
              operands);
  };
  // Byte offset of the thread's float2 (row half i, box jj of the chunk) in a
  // buffer: row r = 16*warp + lane/4 + 8i of a box holds 32 bytes, and
  // SWIZZLE_32B XORs the 16-byte unit with (r / 4) % 2 = (lane / 16) % 2.
  Value rowOff = b.create<LLVM::MulOp>(
      loc,
      b.create<LLVM::AddOp>(loc, b.create<LLVM::MulOp>(loc, warp, c(16)),
                            b.create<LLVM::UDivOp>(loc, lane, c(4))),
      c(32));
  Value unit = b.create<LLVM::XOrOp>(
      loc,
      b.create<LLVM::LShrOp>(loc, b.create<LLVM::AndOp>(loc, lane, c(3)), c(1)),
      b.create<LLVM::AndOp>(loc, b.create<LLVM::LShrOp>(loc, lane, c(4)),
                            c(1)));
  Value inRow = b.create<LLVM::AddOp>(
      loc, b.create<LLVM::MulOp>(loc, unit, c(16)),
      b.create<LLVM::MulOp>(loc, b.create<LLVM::AndOp>(loc, lane, c(1)), c(8)));
  Value wgBase = b.create<LLVM::AddOp>(
      loc, b.create<LLVM::MulOp>(loc, wg, c(wgBytes)), c(layout.stagingBase));
  Value mineBase = b.create<LLVM::AddOp>(
      loc, wgBase, b.create<LLVM::AddOp>(loc, rowOff, inRow));

  if (chunks % buffers != 0)
    waitReadThenSync(0, "", ValueRange{}, "");
  Value mBase = b.create<LLVM::AddOp>(
      loc, b.create<LLVM::MulOp>(loc, op.getMBlock(), c(config.getBlockM())),
      b.create<LLVM::MulOp>(loc, wg, c(64)));
  Value nBase =
      b.create<LLVM::MulOp>(loc, op.getNBlock(), c(config.getBlockN()));
  Value tmapD =
      b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), arg(KernelOp::TmapD));
  for (int64_t q = 0; q < chunks; ++q) {
    int64_t bufOff = (q % buffers) * chunkBytes;
    for (int i = 0; i < 2; ++i)
      for (int64_t jj = 0; jj < boxesPerChunk; ++jj) {
        Value at =
            smemAt(b, loc,
                   b.create<LLVM::AddOp>(loc, mineBase,
                                         c(bufOff + jj * kBoxBytes + 256 * i)));
        b.create<LLVM::StoreOp>(loc, mine(b, i, q * boxesPerChunk + jj), at,
                                /*alignment=*/8);
      }
    b.create<NVVM::FenceProxyOp>(
        loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    // Operands: $2 the d map, $3 the row, $4 the group, then per box its
    // column and shared-memory address.
    std::string issue;
    std::string constraints = "l,r,r,";
    SmallVector<Value> extra{tmapD, mBase, op.getGroup()};
    for (int64_t jj = 0; jj < boxesPerChunk; ++jj) {
      int64_t colArg = 5 + 2 * jj, bufArg = colArg + 1;
      issue += ("@p cp.reduce.async.bulk.tensor.3d.global.shared::cta.add."
                "tile.bulk_group [$2, {$" +
                Twine(colArg) + ", $3, $4}], [$" + Twine(bufArg) + "];\n\t")
                   .str();
      constraints += "r,r,";
      extra.push_back(
          b.create<LLVM::AddOp>(loc, nBase, c(epilogueChunkCols * q + 8 * jj)));
      extra.push_back(b.create<LLVM::PtrToIntOp>(
          loc, b.getI32Type(),
          smemAt(
              b, loc,
              b.create<LLVM::AddOp>(loc, wgBase, c(bufOff + jj * kBoxBytes)))));
    }
    issue += "@p cp.async.bulk.commit_group;\n\t";
    waitReadThenSync(buffers - 2, issue, extra, constraints);
  }
}

std::pair<Value, Value> KernelLowering::tileCounts(OpBuilder &b,
                                                   Location loc) {
  auto ceilDiv = [&](Value v, int64_t d) {
    return b
        .create<arith::DivUIOp>(
            loc, b.create<arith::AddIOp>(loc, v, i32(b, loc, d - 1)),
            i32(b, loc, d))
        .getResult();
  };
  return {ceilDiv(arg(KernelOp::DimM), config.getBlockM()),
          ceilDiv(arg(KernelOp::DimN), config.getBlockN())};
}

/// dgemm.park.store (math role): the warpgroups write their sums into the
/// park, a row-major FP32 tile whose 16-byte units are XOR-swizzled with
/// the row (parkSwizzle), and the first math thread records the tile's
/// coordinates beside it. The park's barriers are dgemm-place-sync's.
void KernelLowering::lowerParkStore(ParkStoreOp op) {
  // The workers add the tile to d in place: c (= d) is prefetched as for
  // the math warpgroups' own in-place epilogue.
  if (prefetchCBlocks >= 0)
    prefetchC(op, op.getSums(), Value(), op.getGroup(), op.getMBlock(),
              op.getNBlock());
  // unsafe-skip-epilogue: the stores are skipped, the hand-over is not.
  if (skipEpilogue)
    behindNullWorkspace(op);
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto c = [&](int64_t v) { return i32(b, loc, v); };
  int64_t n = config.getBlockN(), rowBytes = 4 * n;
  Value t = tid(b, loc);
  Fragment f = fragmentOf(b, loc, t, /*quads=*/false);
  Value lane = b.create<arith::RemUIOp>(loc, t, c(32));
  Value q = b.create<arith::AndIOp>(loc, lane, c(3));
  Value r7 = parkSwizzle(b, loc, f.rowInTile);
  Value rowByte = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, f.rowInTile, c(rowBytes)),
      c(parkBase()));
  rowByte = b.create<arith::AddIOp>(
      loc, rowByte,
      b.create<arith::MulIOp>(loc, b.create<arith::AndIOp>(loc, q, c(1)),
                              c(8)));
  Value qHalf = b.create<arith::ShRUIOp>(loc, q, c(1));
  Value offs[4];
  for (int k = 0; k < 4; ++k) {
    Value unit = b.create<arith::XOrIOp>(
        loc, b.create<arith::AddIOp>(loc, qHalf, c(2 * k)), r7);
    offs[k] = b.create<arith::AddIOp>(
        loc, rowByte, b.create<arith::MulIOp>(loc, unit, c(16)));
  }
  SumPairs sums(op.getSums());
  for (int i = 0; i < 2; ++i)
    for (int64_t j = 0; j < n / 8; ++j) {
      Value at = b.create<arith::AddIOp>(
          loc, offs[j % 4], c(8 * i * rowBytes + 128 * (j / 4)));
      b.create<LLVM::StoreOp>(loc, sums.pair(b, loc, i, j), smemAt(b, loc, at),
                              /*alignment=*/8);
    }
  // The tile's coordinates go with it, so that the workers need not know
  // the tile schedule: the first math thread writes (group * M tiles +
  // m-block) * N tiles + n-block, one value that LLVM computes before the
  // block loop (three values kept live past it made ptxas spill at 192
  // columns; the workers read the group's K themselves for the same reason).
  {
    auto [mTiles, nTiles] = tileCounts(b, loc);
    Value coords = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(
            loc,
            b.create<arith::AddIOp>(
                loc, b.create<arith::MulIOp>(loc, op.getGroup(), mTiles),
                op.getMBlock()),
            nTiles),
        op.getNBlock());
    auto first = b.create<scf::IfOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t, c(128)),
        /*withElse=*/false);
    OpBuilder fb = first.getThenBodyBuilder();
    fb.create<LLVM::StoreOp>(loc, coords, parkRecord(fb, loc), /*alignment=*/4);
  }
  op.erase();
}

/// dgemm.park.reduce (workers' role, threads 32 .. 32 + W - 1 of the
/// producer warpgroup): read the parked tile's record (its coordinates: the
/// tile schedule is not needed) and add the sums of a tile with K blocks to
/// d with 16-byte reductions (worker w of W = workerThreads takes unit w % U
/// of rows w / U, w / U + W / U, ..., with U = block_n / 4 units per row).
/// The park's barriers are dgemm-place-sync's.
void KernelLowering::lowerParkReduce(ParkReduceOp op) {
  // unsafe-skip-epilogue: the reductions are skipped, the hand-over is not.
  if (skipEpilogue)
    behindNullWorkspace(op);
  // What does not change from tile to tile (the thread's offsets in the
  // park, the tile counts) is computed once, at the start of the block that
  // holds the workers' loop.
  Operation *parent = op->getParentOp();
  OpBuilder b(op);
  if (isa<scf::ForOp>(parent))
    b.setInsertionPointToStart(parent->getBlock());
  Location loc = op.getLoc();
  auto c = [&](int64_t v) { return i32(b, loc, v); };
  int64_t n = config.getBlockN(), rowBytes = 4 * n, units = n / 4;
  int64_t rowsPer = workerThreads / units;
  // The swizzle repeats every 4 rows: every step sees the same pattern.
  int64_t unroll = std::max<int64_t>(4, 8 / rowsPer);
  int64_t rowsPerStep = rowsPer * unroll, steps = config.getBlockM() / rowsPerStep;
  Value wt = b.create<arith::SubIOp>(loc, tid(b, loc), c(32));
  Value u = b.create<arith::RemUIOp>(loc, wt, c(units));
  Value h = b.create<arith::DivUIOp>(loc, wt, c(units));
  Value uHigh = b.create<arith::AndIOp>(loc, u, c(~int64_t(7)));
  Value uLow = b.create<arith::AndIOp>(loc, u, c(7));
  Value smemOff[8];
  for (int64_t k = 0; k < unroll; ++k) {
    Value r = b.create<arith::AddIOp>(loc, h, c(k * rowsPer));
    Value unit = b.create<arith::OrIOp>(
        loc, uHigh,
        b.create<arith::XOrIOp>(loc, uLow, parkSwizzle(b, loc, r)));
    smemOff[k] = b.create<arith::AddIOp>(
        loc,
        b.create<arith::AddIOp>(
            loc, b.create<arith::MulIOp>(loc, r, c(rowBytes)),
            b.create<arith::MulIOp>(loc, unit, c(16))),
        c(parkBase()));
  }
  Value m = arg(KernelOp::DimM), nDim = arg(KernelOp::DimN);
  auto [mTiles, nTiles] = tileCounts(b, loc);
  Value perGroup = b.create<arith::MulIOp>(loc, mTiles, nTiles);
  auto ext = [&](OpBuilder &bb, Value v) {
    return bb.create<arith::ExtUIOp>(loc, bb.getI64Type(), v).getResult();
  };
  {
    OpBuilder lb(op);
    Value coords = lb.create<LLVM::LoadOp>(loc, lb.getI32Type(),
                                           parkRecord(lb, loc), /*align=*/4);
    Value group = lb.create<arith::DivUIOp>(loc, coords, perGroup);
    Value rem = lb.create<arith::RemUIOp>(loc, coords, perGroup);
    Value kPtr = lb.create<LLVM::GEPOp>(loc, globalPtr(), lb.getI32Type(),
                                        arg(KernelOp::PtrKs), ValueRange{group});
    Value blocks = lb.create<arith::DivUIOp>(
        loc, lb.create<LLVM::LoadOp>(loc, lb.getI32Type(), kPtr),
        i32(lb, loc, 128));
    Value mBase = lb.create<arith::MulIOp>(
        loc, lb.create<arith::DivUIOp>(loc, rem, nTiles),
        i32(lb, loc, config.getBlockM()));
    Value nBase = lb.create<arith::MulIOp>(
        loc, lb.create<arith::RemUIOp>(loc, rem, nTiles), i32(lb, loc, n));
    auto any = lb.create<scf::IfOp>(
        loc,
        lb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, blocks,
                                 i32(lb, loc, 0)),
        /*withElse=*/false);
    {
      OpBuilder ab = any.getThenBodyBuilder();
      Value col = ab.create<arith::AddIOp>(
          loc, nBase, ab.create<arith::MulIOp>(loc, u, i32(ab, loc, 4)));
      Value colOk =
          ab.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, nDim);
      Value rowsLeft = ab.create<arith::SubIOp>(loc, m, mBase);
      Value first = ab.create<arith::AddIOp>(
          loc,
          ab.create<arith::MulIOp>(
              loc,
              ab.create<arith::AddIOp>(
                  loc,
                  ab.create<arith::MulIOp>(loc, ext(ab, group), ext(ab, m)),
                  ext(ab, ab.create<arith::AddIOp>(loc, mBase, h))),
              ext(ab, nDim)),
          ext(ab, col));
      Value base = ab.create<LLVM::PtrToIntOp>(
          loc, ab.getI64Type(),
          ab.create<LLVM::GEPOp>(loc, globalPtr(), ab.getF32Type(),
                                 arg(KernelOp::PtrD), ValueRange{first}));
      Value rowStride = ab.create<arith::MulIOp>(
          loc, ext(ab, nDim), ab.create<arith::ConstantIntOp>(
                                  loc, ab.getI64Type(), 4 * rowsPer));
      auto loop = ab.create<scf::ForOp>(loc, i32(ab, loc, 0),
                                        i32(ab, loc, steps), i32(ab, loc, 1));
      OpBuilder sb = OpBuilder::atBlockBegin(loop.getBody());
      Value s = loop.getInductionVar();
      Value rowS = sb.create<arith::MulIOp>(loc, s, i32(sb, loc, rowsPerStep));
      Value smemS = sb.create<arith::MulIOp>(
          loc, s, i32(sb, loc, rowsPerStep * rowBytes));
      auto v4 = VectorType::get({4}, sb.getF32Type());
      SmallVector<Value> vals;
      for (int64_t kk = 0; kk < unroll; ++kk)
        vals.push_back(sb.create<LLVM::LoadOp>(
            loc, v4,
            smemAt(sb, loc, sb.create<arith::AddIOp>(loc, smemOff[kk], smemS)),
            /*alignment=*/16));
      for (int64_t kk = 0; kk < unroll; ++kk) {
        Value r = sb.create<arith::AddIOp>(
            loc, sb.create<arith::AddIOp>(loc, rowS, h),
            i32(sb, loc, kk * rowsPer));
        Value ok = sb.create<arith::AndIOp>(
            loc, colOk,
            sb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, r,
                                     rowsLeft));
        // Rows (s * unroll + kk) * rowsPer past the thread's first.
        Value off = sb.create<arith::MulIOp>(
            loc,
            sb.create<arith::AddIOp>(
                loc,
                sb.create<arith::MulIOp>(
                    loc, ext(sb, s),
                    sb.create<arith::ConstantIntOp>(loc, sb.getI64Type(),
                                                    unroll)),
                sb.create<arith::ConstantIntOp>(loc, sb.getI64Type(), kk)),
            rowStride);
        Value addr = sb.create<arith::AddIOp>(loc, base, off);
        OpBuilder gb = sb.create<scf::IfOp>(loc, ok, /*withElse=*/false)
                           .getThenBodyBuilder();
        SmallVector<Value> operands = {addr};
        for (int e = 0; e < 4; ++e)
          operands.push_back(gb.create<LLVM::ExtractElementOp>(
              loc, vals[kk], i32(gb, loc, e)));
        inlinePtx(gb, loc, "red.global.add.v4.f32 [$0], {$1, $2, $3, $4};",
                  "l,f,f,f,f,~{memory}", operands);
      }
    }
  }
  op.erase();
}

LogicalResult KernelLowering::run(WarpSpecializeOp ws) {
  Location loc = ws.getLoc();
  if (!ws.getFullArrivalsAttr() || !ws.getEmptyArrivalsAttr())
    return ws.emitError("barrier arrival counts are missing: run "
                        "dgemm-place-sync before convert-dgemm-to-nvvm");
  // Producer bookkeeping cells, at the entry so SROA promotes them.
  {
    OpBuilder b(&func.getBody().front(), func.getBody().front().begin());
    for (int64_t r = 0; r < config.getDescSlots(); ++r) {
      Value cell = b.create<LLVM::AllocaOp>(loc, LLVM::LLVMPointerType::get(ctx),
                                            b.getI32Type(), i32(b, loc, 1));
      b.create<LLVM::StoreOp>(loc, i32(b, loc, -1), cell);
      lastUse.push_back(cell);
    }
  }

  int64_t perWarp = 4 * config.getMathWarpgroups();
  if (*ws.getEmptyArrivals() != perWarp &&
      *ws.getEmptyArrivals() != 32 * perWarp)
    return ws.emitError("empty-barrier arrival count ")
           << *ws.getEmptyArrivals()
           << " is neither one per math warp nor one per math thread";
  releasePerWarp = *ws.getEmptyArrivals() == perWarp;
  // The workers' role reduces whole rows of 16-byte units, a power of two
  // of rows at a time, over the tile's rows in steps of at least 4 rows.
  if (!ws.getWorkers().empty()) {
    workerThreads = ws.getWorkerThreads() ? *ws.getWorkerThreads() : 0;
    int64_t units = config.getBlockN() / 4;
    int64_t rows = units > 0 ? workerThreads / units : 0;
    if (units == 0 || workerThreads % units != 0 || rows == 0 ||
        !llvm::isPowerOf2_64(rows) || config.getBlockM() % (4 * rows) != 0)
      return ws.emitError("worker_threads ")
             << workerThreads << " is not a power-of-two number of rows of "
             << "block_n / 4 = " << units << " 16-byte units dividing "
             << "block_m / 4";
    if (!ws.getParkFullArrivals() || !ws.getParkEmptyArrivals())
      return ws.emitError("the workers role has no park arrival counts: "
                          "dgemm-place-sync records them when one role "
                          "writes the park and another reads it");
  }

  OpBuilder b(ws);
  Value t = tid(b, loc);
  Value zero = i32(b, loc, 0);
  // Thread 0 initializes every stage's barriers, then the whole CTA syncs.
  {
    auto isFirst = b.create<scf::IfOp>(
        loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t, zero),
        /*withElse=*/false);
    OpBuilder ib = isFirst.getThenBodyBuilder();
    for (int64_t s = 0; s < layout.stages; ++s) {
      Value stage = i32(ib, loc, s);
      ib.create<NVVM::MBarrierInitOp>(
          loc, barrier(ib, loc, BarrierKind::full, stage),
          i32(ib, loc, *ws.getFullArrivals()), Value());
      // The recorded count is per CTA; every CTA of a cluster releases
      // every CTA's stages.
      ib.create<NVVM::MBarrierInitOp>(
          loc, barrier(ib, loc, BarrierKind::empty, stage),
          i32(ib, loc, *ws.getEmptyArrivals() * config.getClusterM()),
          Value());
    }
    if (ws.getParkFullArrivals()) {
      ib.create<NVVM::MBarrierInitOp>(
          loc, parkBarrier(ib, loc, /*full=*/true),
          i32(ib, loc, *ws.getParkFullArrivals()), Value());
      ib.create<NVVM::MBarrierInitOp>(
          loc, parkBarrier(ib, loc, /*full=*/false),
          i32(ib, loc, *ws.getParkEmptyArrivals()), Value());
    }
    ib.create<NVVM::FenceMbarrierInitOp>(loc);
  }
  // With a cluster, the peers' barriers must be initialized before any
  // remote arrive or multicast complete_tx reaches them.
  if (config.getClusterM() > 1)
    clusterSync(b, loc);
  else
    b.create<NVVM::Barrier0Op>(loc);

  Value wg = b.create<arith::DivUIOp>(loc, t, i32(b, loc, 128));
  auto roles = b.create<scf::IfOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, wg, zero),
      /*withElse=*/true);
  {
    OpBuilder pb = roles.getThenBodyBuilder();
    pb.create<NVVM::SetMaxRegisterOp>(loc, ws.getProducerRegs(),
                                      NVVM::SetMaxRegisterAction::decrease);
    auto elected = pb.create<scf::IfOp>(
        loc, pb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t, zero),
        /*withElse=*/workerThreads > 0);
    Block *body = elected.thenBlock();
    body->getOperations().splice(body->begin(),
                                 ws.getProducer().front().getOperations());
    if (workerThreads > 0) {
      OpBuilder eb = elected.getElseBodyBuilder();
      Value from = i32(eb, loc, 32);
      auto workers = eb.create<scf::IfOp>(
          loc,
          eb.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::ult,
              eb.create<arith::SubIOp>(loc, t, from),
              i32(eb, loc, workerThreads)),
          /*withElse=*/false);
      Block *wbody = workers.thenBlock();
      wbody->getOperations().splice(wbody->begin(),
                                    ws.getWorkers().front().getOperations());
    }
  }
  {
    OpBuilder mb = roles.getElseBodyBuilder();
    mb.create<NVVM::SetMaxRegisterOp>(loc, ws.getMathRegs(),
                                      NVVM::SetMaxRegisterAction::increase);
    Block *body = roles.elseBlock();
    body->getOperations().splice(std::prev(body->end()),
                                 ws.getMath().front().getOperations());
    // The epilogue's TMA reduce-adds read shared memory and write d after
    // their issue: the issuing thread of each warpgroup waits for all of them
    // before the CTA exits.
    if (tmaReduceEpilogue) {
      OpBuilder eb(body->getTerminator());
      Value inWg =
          eb.create<LLVM::URemOp>(loc, tid(eb, loc), i32(eb, loc, 128));
      inlinePtx(eb, loc,
                "{\n\t.reg .pred p;\n\tsetp.eq.u32 p, $0, 0;\n\t"
                "@p cp.async.bulk.wait_group 0;\n\t}",
                "r,~{memory}", ValueRange{inWg});
    }
  }
  // No CTA may exit while a peer can still arrive on its barriers or
  // multicast into its shared memory.
  if (config.getClusterM() > 1) {
    OpBuilder eb(ws->getContext());
    eb.setInsertionPointAfter(roles);
    clusterSync(eb, loc);
  }
  ws.erase();

  // Lower the kernel ops; stage indices last, since loads and drains read the
  // pipeline iteration through them.
  // Each phase collects afresh: lowering erases ops.
  auto lowerEach = [&](auto lowerOne) {
    using OpT = std::decay_t<
        typename llvm::function_traits<decltype(lowerOne)>::template arg_t<0>>;
    SmallVector<OpT> ops;
    func.walk([&](OpT op) { ops.push_back(op); });
    for (OpT op : ops)
      lowerOne(op);
  };
  lowerEach([&](TmaLoadOp op) { lowerTmaLoad(op); });
  lowerEach([&](DescDrainOp op) { lowerDescDrain(op); });
  lowerEach([&](DescUpdateOp op) { lowerDescUpdate(op); });
  lowerEach([&](DescPublishOp op) { lowerDescPublish(op); });
  lowerEach([&](WaitOp op) { lowerWait(op); });
  lowerEach([&](ArriveOp op) { lowerArrive(op); });
  lowerEach([&](MmaOp op) { lowerMma(op); });
  lowerEach([&](MmaWaitOp op) { lowerMmaWait(op); });
  lowerEach([&](TurnOp op) { lowerTurn(op); });
  lowerEach([&](ProxyFenceOp op) { lowerProxyFence(op); });
  lowerEach([&](LoadScalesOp op) { lowerLoadScales(op); });
  lowerEach([&](PromoteOp op) { lowerPromote(op); });
  lowerEach([&](EpilogueOp op) { lowerEpilogue(op); });
  lowerEach([&](ParkStoreOp op) { lowerParkStore(op); });
  lowerEach([&](ParkReduceOp op) { lowerParkReduce(op); });
  lowerEach([&](PrefetchCOp op) { lowerPrefetchC(op); });
  lowerEach([&](StageOp op) { lowerStage(op); });
  // The block-loop marks served the c prefetch's placement.
  func.walk([](scf::ForOp loop) { loop->removeAttr("dgemm.first_block"); });
  WalkResult left = func.walk([&](Operation *op) {
    if (isa<DGemmDialect>(op->getDialect())) {
      op->emitOpError("cannot be lowered to NVVM");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(left.wasInterrupted());
}

struct ConvertDGemmToNVVMPass
    : public mlir::dgemm::impl::ConvertDGemmToNVVMBase<ConvertDGemmToNVVMPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    if (!module.lookupSymbol(kSmemSymbol))
      b.create<LLVM::GlobalOp>(
          module.getLoc(), LLVM::LLVMArrayType::get(b.getI8Type(), 0),
          /*isConstant=*/false, LLVM::Linkage::External, kSmemSymbol,
          Attribute(), /*alignment=*/1024, /*addrSpace=*/3);
    for (KernelOp kernel : kernels) {
      Block &entry = kernel.getBody().front();
      auto fnType = LLVM::LLVMFunctionType::get(
          LLVM::LLVMVoidType::get(ctx), llvm::to_vector(entry.getArgumentTypes()));
      b.setInsertionPoint(kernel);
      auto func = b.create<LLVM::LLVMFuncOp>(kernel.getLoc(),
                                             kernel.getSymName(), fnType);
      ConfigAttr config = kernel.getConfig();
      func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                    b.getUnitAttr());
      func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                    b.getDenseI32ArrayAttr(
                        {static_cast<int32_t>(config.getThreads()), 1, 1}));
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    b.getI32IntegerAttr(1));
      // Tensor maps travel by value as __grid_constant__ parameters, so TMA
      // can read them in place (docs/KernelABI.md).
      for (unsigned i = KernelOp::TmapA; i <= KernelOp::TmapD; ++i) {
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(LLVM::LLVMArrayType::get(
                            b.getI8Type(), 128)));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(64));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
      func.getBody().takeBody(kernel.getBody());
      OpBuilder::atBlockEnd(&func.getBody().front())
          .create<LLVM::ReturnOp>(kernel.getLoc(), ValueRange{});
      WarpSpecializeOp ws;
      func.walk([&](WarpSpecializeOp op) { ws = op; });
      if (!ws) {
        kernel.emitOpError("has no dgemm.warp_specialize");
        return signalPassFailure();
      }
      if (redVectorWidth != 0 && redVectorWidth != 2 && redVectorWidth != 4) {
        kernel.emitOpError("red-vector-width must be 0 (by cluster), 2 or 4, got ")
            << static_cast<int64_t>(redVectorWidth);
        return signalPassFailure();
      }
      if (redEpilogueMaxBlocks < 0) {
        kernel.emitOpError("red-epilogue-max-blocks must be >= 0 (0: every "
                           "tile), got ")
            << static_cast<int64_t>(redEpilogueMaxBlocks);
        return signalPassFailure();
      }
      if (epilogueVectorWidth != 2 && epilogueVectorWidth != 4) {
        kernel.emitOpError("epilogue-vector-width must be 2 or 4, got ")
            << static_cast<int64_t>(epilogueVectorWidth);
        return signalPassFailure();
      }
      if (turnPassPending < 0 || turnPassPending > 3) {
        kernel.emitOpError("turn-pass-pending must be 0 to 3 (WGMMAs of "
                           "a block's 4 left running at the hand-over), got ")
            << static_cast<int64_t>(turnPassPending);
        return signalPassFailure();
      }
      // Quad-ordered B (quad_b = 1; the config's verifier checked its
      // width).
      bool quadB = config.getQuadB() != 0;
      // Options written for B's rows in order do not apply to it:
      // tma-reduce-epilogue's buffers and the unsafe sfb variants.
      bool tmaReduce = tmaReduceEpilogue && !quadB;
      int64_t sfbEvery = quadB ? 1 : int64_t(sfbStride);
      bool sfbAligned = sfbVec4 && !quadB;
      if (epilogueChunkCols != 8 && epilogueChunkCols != 16) {
        kernel.emitOpError("epilogue-chunk-cols must be 8 or 16, got ")
            << static_cast<int64_t>(epilogueChunkCols);
        return signalPassFailure();
      }
      // The kernel's configuration may ask for the reduction epilogue
      // (red_max_blocks, chosen per call by the runtime's heuristics); the
      // red-epilogue option, when set, takes precedence.
      // An in-place kernel (in_place_only = 1) reduces every tile with K
      // blocks, 16 bytes at a time unless red-vector-width says 2, and
      // prefetches c at the tile's start for tiles of at most 8 blocks only
      // (bench/NOTES.md, section 9: a prefetch inside the block loop made
      // long tiles 2-4% slower, none at all made short ones 10-45% slower).
      bool inPlaceOnly = config.getInPlaceOnly() != 0;
      bool reduce =
          redEpilogue || inPlaceOnly || config.getRedMaxBlocks() > 0;
      int64_t reduceMaxBlocks =
          inPlaceOnly   ? 0
          : redEpilogue ? int64_t(redEpilogueMaxBlocks)
                        : config.getRedMaxBlocks();
      int64_t width = redVectorWidth != 0            ? int64_t(redVectorWidth)
                      : inPlaceOnly                  ? 4
                      : config.getClusterM() == 2    ? 2
                                                     : 4;
      // In-place kernels prefetch at the tile's start, by default the c of
      // the short tiles the reduction kernels are chosen for
      // (in-place-prefetch-max-blocks).
      int64_t cBlocks = inPlaceOnly ? (inPlacePrefetchMaxBlocks < 0 ? -1 : 0)
                                    : int64_t(prefetchCBlocks);
      int64_t cMaxBlocks = inPlaceOnly ? int64_t(inPlacePrefetchMaxBlocks)
                                       : int64_t(prefetchCMaxBlocks);
      if (failed(KernelLowering(func, config, perChunkEpilogue,
                                tmaReduce, epilogueChunkCols,
                                cBlocks, cMaxBlocks, reduce, reduceMaxBlocks,
                                width, turnPassPending, unscaledPromotion,
                                mmaSetupBeforeTurn, epilogueVectorWidth,
                                inPlaceOnly, uniformWarpgroup, sfbEvery,
                                sfbAligned, quadB, skipEpilogue)
                     .run(ws)))
        return signalPassFailure();
      kernel.erase();
    }
  }
};
} // namespace
