//===- PipelinePatterns.cpp - Stages, barriers, TMA and descriptors -------===//
//
// The producer/consumer pipeline: the iteration -> (stage, phase) map,
// mbarrier waits and arrives, TMA loads (multicast included), the in-kernel
// tensor-map rewrites, the drains before them and their release/acquire, and
// the proxy fence before a stage read through the generic proxy is released.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

namespace {
struct StageLowering : KernelPattern<StageOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(StageOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value s = i32(b, loc, op.getStages());
    Value stage = b.create<arith::RemUIOp>(loc, op.getIteration(), s);
    Value round = b.create<arith::DivUIOp>(loc, op.getIteration(), s);
    Value phase = b.create<arith::AndIOp>(loc, round, i32(b, loc, 1));
    rewriter.replaceAllUsesWith(op.getStage(), stage);
    rewriter.replaceAllUsesWith(op.getPhase(), phase);
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitLowering : KernelPattern<WaitOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(WaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value parity = op.getPhase();
    // The producer waits for the release of the stage's previous contents: a
    // fresh barrier counts as released (its "previous" phase has parity 1).
    if (op.getBarrier() == BarrierKind::empty ||
        op.getBarrier() == BarrierKind::park_empty)
      parity = b.create<LLVM::XOrOp>(loc, parity, i32(b, loc, 1));
    waitParity(b, loc, barrier(b, loc, op.getBarrier(), op.getStage()), parity);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ArriveLowering : KernelPattern<ArriveOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(ArriveOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value bar = barrier(b, loc, op.getBarrier(), op.getStage());
    // A park barrier counts every thread of the role that arrives
    // (dgemm-place-sync): each thread's arrive releases its own accesses.
    if (op.getBarrier() == BarrierKind::park_full ||
        op.getBarrier() == BarrierKind::park_empty) {
      b.create<NVVM::MBarrierArriveOp>(loc, Type(), bar, Value(),
                                       NVVM::MemScopeKind::CTA,
                                       /*relaxed=*/false);
      rewriter.eraseOp(op);
      return success();
    }
    if (std::optional<uint64_t> tx = op.getTxBytes()) {
      b.create<NVVM::MBarrierArriveExpectTxOp>(
          loc, Type(), bar, i32(b, loc, static_cast<int64_t>(*tx)),
          NVVM::MemScopeKind::CTA, /*relaxed=*/false, Value());
      rewriter.eraseOp(op);
      return success();
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
    if (!k.releasePerWarp) {
      release(b);
      rewriter.eraseOp(op);
      return success();
    }
    // A release by the math role: the warp's lanes synchronize (which orders
    // their earlier shared-memory reads before lane 0's release-arrive), then
    // one lane arrives for the warp. dgemm-place-sync counts 4 arrivals per
    // math warpgroup accordingly.
    b.create<NVVM::SyncWarpOp>(loc, i32(b, loc, -1));
    Value lane = b.create<arith::RemUIOp>(loc, tid(b, loc), i32(b, loc, 32));
    auto first = b.create<scf::IfOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, lane,
                                i32(b, loc, 0)),
        /*withElseRegion=*/false);
    OpBuilder t = first.getThenBodyBuilder();
    release(t);
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmaLoadLowering : KernelPattern<TmaLoadOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(TmaLoadOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value dst, desc;
    switch (op.getOperand()) {
    // A and B: a rewritten descriptor slot (below), or the kernel-parameter
    // map in a kernel that rewrites none (m-grouped).
    case TmaOperand::a:
      dst = stageBuffer(b, loc, layout.aBase, layout.aBytes, op.getStage());
      desc = arg(KernelOp::TmapA);
      break;
    case TmaOperand::b:
      dst = stageBuffer(b, loc, layout.bBase, layout.bBytes, op.getStage());
      desc = arg(KernelOp::TmapB);
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
      recordUse(b, loc, slot,
                op.getStage().getDefiningOp<StageOp>().getIteration());
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
        loc, dst, desc, coords, bar, ValueRange{}, mask, Value(),
        NVVM::TMALoadMode::TILE, /*isCTAOnly=*/!mask, NVVM::CTAGroupKindAttr(),
        Value());
    rewriter.eraseOp(op);
    return success();
  }
};

struct DescUpdateLowering : KernelPattern<DescUpdateOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(DescUpdateOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
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
    Value base = b.create<LLVM::PtrToIntOp>(
        loc, b.getI64Type(), arg(isA ? KernelOp::PtrA : KernelOp::PtrB));
    Value addr = b.create<LLVM::AddOp>(
        loc, base, b.create<LLVM::MulOp>(loc, rows, op.getKOffset()));
    Value k64 = b.create<LLVM::ZExtOp>(loc, b.getI64Type(), op.getKSize());
    inlinePtx(
        b, loc,
        "tensormap.replace.tile.global_address.global.b1024.b64 [$0], $1;",
        "l,l,~{memory}", ValueRange{slot, addr});
    inlinePtx(b, loc,
              "tensormap.replace.tile.global_dim.global.b1024.b32 [$0], 0, $1;",
              "l,r,~{memory}", ValueRange{slot, op.getKSize()});
    // Quad-ordered B rows (5-D map): dims 1-4 step 1, 4, 2 and 16 rows.
    const int64_t rowSteps[] = {1, 4, 2, 16};
    for (int64_t d = 0; d < (quadB && !isA ? 4 : 1); ++d)
      inlinePtx(
          b, loc,
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
    rewriter.eraseOp(op);
    return success();
  }
};

struct DescDrainLowering : KernelPattern<DescDrainOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(DescDrainOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value last;
    for (auto [r, cell] : llvm::enumerate(k.lastUse)) {
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
    rewriter.eraseOp(op);
    return success();
  }
};

struct DescPublishLowering : KernelPattern<DescPublishOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(DescPublishOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value slot =
        toGeneric(b, loc, slotAddress(b, loc, op.getOperand(), op.getSlot()));
    b.create<NVVM::FenceProxyReleaseOp>(loc, NVVM::MemScopeKind::GPU,
                                        NVVM::ProxyKind::GENERIC,
                                        NVVM::ProxyKind::TENSORMAP);
    b.create<NVVM::FenceProxyAcquireOp>(
        loc, NVVM::MemScopeKind::GPU, slot, i32(b, loc, 128),
        NVVM::ProxyKind::GENERIC, NVVM::ProxyKind::TENSORMAP);
    rewriter.eraseOp(op);
    return success();
  }
};

struct ProxyFenceLowering : KernelPattern<ProxyFenceOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(ProxyFenceOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    b.create<NVVM::FenceProxyOp>(
        op.getLoc(), NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void nvvm_lowering::populatePipelinePatterns(KernelContext &k,
                                             RewritePatternSet &patterns) {
  patterns.add<StageLowering, WaitLowering, ArriveLowering, TmaLoadLowering,
               DescUpdateLowering, DescDrainLowering, DescPublishLowering,
               ProxyFenceLowering>(k);
}
