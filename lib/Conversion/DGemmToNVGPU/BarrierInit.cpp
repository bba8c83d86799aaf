//===- BarrierInit.cpp - The barriers' initialization ---------------------===//
//
// Before dgemm.warp_specialize splits the CTA into roles, thread 0
// initializes every barrier with the arrival count dgemm-place-sync recorded
// on the op (nvgpu.mbarrier.init), and the CTA (or the whole cluster, whose
// peers arrive on and multicast into each other's barriers) synchronizes.
// The counts are then spent: the pattern removes them from the op, which
// convert-dgemm-to-nvvm lowers to the role dispatch.
//
//===----------------------------------------------------------------------===//

#include "NVGPUPatterns.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvgpu_lowering;

namespace {
struct BarrierInitToNVGPU : NVGPUPattern<WarpSpecializeOp> {
  using NVGPUPattern::NVGPUPattern;
  LogicalResult
  matchAndRewrite(WarpSpecializeOp ws, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = ws.getLoc();
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(ws);
    Value zero = i32(b, loc, 0);
    auto isFirst = b.create<scf::IfOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tid(b, loc),
                                zero),
        /*withElse=*/false);
    OpBuilder ib = isFirst.getThenBodyBuilder();
    auto init = [&](BarrierKind kind, Value stage, int64_t count) {
      ib.create<nvgpu::MBarrierInitOp>(
          loc, barrierGroup(ib, loc, kind, stage),
          ib.create<arith::ConstantIndexOp>(loc, count), barrierIndex(ib, loc),
          /*predicate=*/Value());
    };
    for (int64_t s = 0; s < layout.stages; ++s) {
      Value stage = i32(ib, loc, s);
      init(BarrierKind::full, stage, *ws.getFullArrivals());
      // The recorded count is per CTA; every CTA of a cluster releases
      // every CTA's stages.
      init(BarrierKind::empty, stage,
           *ws.getEmptyArrivals() * config.getClusterM());
    }
    if (ws.getParkFullArrivals()) {
      init(BarrierKind::park_full, zero, *ws.getParkFullArrivals());
      init(BarrierKind::park_empty, zero, *ws.getParkEmptyArrivals());
    }
    ib.create<NVVM::FenceMbarrierInitOp>(loc);
    // With a cluster, the peers' barriers must be initialized before any
    // remote arrive or multicast complete_tx reaches them.
    if (config.getClusterM() > 1)
      clusterSync(b, loc);
    else
      b.create<NVVM::Barrier0Op>(loc);
    rewriter.modifyOpInPlace(ws, [&] {
      ws.removeFullArrivalsAttr();
      ws.removeEmptyArrivalsAttr();
      ws.removeParkFullArrivalsAttr();
      ws.removeParkEmptyArrivalsAttr();
    });
    return success();
  }
};
} // namespace

void nvgpu_lowering::populateBarrierInitPatterns(
    KernelContext &k, const LLVMTypeConverter &converter,
    RewritePatternSet &patterns) {
  patterns.add<BarrierInitToNVGPU>(k, converter);
}
