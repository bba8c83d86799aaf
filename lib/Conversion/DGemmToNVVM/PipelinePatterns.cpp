//===- PipelinePatterns.cpp - Stages, barriers, TMA and descriptors -------===//
//
// The producer/consumer pipeline: the iteration -> (stage, phase) map,
// mbarrier waits, the in-kernel tensor-map rewrites and their
// release/acquire, and the proxy fence before a stage read through the
// generic proxy is released. Arrives, TMA loads and the drains before a
// rewrite are convert-dgemm-to-nvgpu's (lib/Conversion/DGemmToNVGPU).
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
  patterns.add<StageLowering, WaitLowering, DescUpdateLowering,
               DescPublishLowering, ProxyFenceLowering>(k);
}
