//===- Arrive.cpp - Barrier arrives ---------------------------------------===//
//
// dgemm.arrive becomes nvgpu.mbarrier.arrive.expect_tx (the producer's
// arrive on a stage's full barrier, expecting the stage's bytes) or
// nvgpu.mbarrier.arrive (releases, and the park's arrives). A release in a
// cluster also arrives on the peers' barriers, which nvgpu has no op for
// (inline PTX: mapa and a shared::cluster arrive).
//
//===----------------------------------------------------------------------===//

#include "NVGPUPatterns.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvgpu_lowering;

namespace {
struct ArriveToNVGPU : NVGPUPattern<ArriveOp> {
  using NVGPUPattern::NVGPUPattern;
  LogicalResult
  matchAndRewrite(ArriveOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    BarrierKind kind = op.getBarrier();
    Value bars = barrierGroup(b, loc, kind, op.getStage());
    Value bar = barrierIndex(b, loc);
    auto token = nvgpu::MBarrierTokenType::get(ctx);
    // A park barrier counts every thread of the role that arrives
    // (dgemm-place-sync): each thread's arrive releases its own accesses.
    if (kind == BarrierKind::park_full || kind == BarrierKind::park_empty) {
      b.create<nvgpu::MBarrierArriveOp>(loc, token, bars, bar);
      rewriter.eraseOp(op);
      return success();
    }
    if (std::optional<uint64_t> tx = op.getTxBytes()) {
      b.create<nvgpu::MBarrierArriveExpectTxOp>(
          loc, bars,
          b.create<arith::ConstantIndexOp>(loc, static_cast<int64_t>(*tx)), bar,
          /*predicate=*/Value());
      rewriter.eraseOp(op);
      return success();
    }
    // A release arrives on the stage's empty barrier of every CTA of the
    // cluster: with multicast, each CTA's producer also writes the others'
    // stages.
    auto release = [&](OpBuilder &rb) {
      rb.create<nvgpu::MBarrierArriveOp>(loc, token, bars, bar);
      if (config.getClusterM() == 1)
        return;
      Value local =
          rb.create<nvgpu::MBarrierGetOp>(loc, rb.getI32Type(), bars, bar);
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
} // namespace

void nvgpu_lowering::populateArrivePatterns(KernelContext &k,
                                            const LLVMTypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns.add<ArriveToNVGPU>(k, converter);
}
