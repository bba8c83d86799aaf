//===- KernelSkeleton.cpp - The kernel function and its roles -------------===//
//
// dgemm.kernel becomes an llvm.func kernel (tensor maps as by-value grid
// constants), and dgemm.warp_specialize the CTA's setup and role dispatch:
// the producer bookkeeping registers, every barrier's initialization, the
// register split (setmaxnreg) and the producer / workers / math branches the
// roles' ops are moved into.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

namespace {
struct WarpSpecializeLowering : KernelPattern<WarpSpecializeOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(WarpSpecializeOp ws, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = ws.getLoc();
    if (!ws.getFullArrivalsAttr() || !ws.getEmptyArrivalsAttr())
      return ws.emitError("barrier arrival counts are missing: run "
                          "dgemm-place-sync before convert-dgemm-to-nvvm");
    // Producer bookkeeping cells, at the entry so SROA promotes them.
    {
      OpBuilder::InsertionGuard guard(rewriter);
      OpBuilder &b = rewriter;
      b.setInsertionPointToStart(&k.func.getBody().front());
      for (int64_t r = 0; r < config.getDescSlots(); ++r) {
        Value cell =
            b.create<LLVM::AllocaOp>(loc, LLVM::LLVMPointerType::get(ctx),
                                     b.getI32Type(), i32(b, loc, 1));
        b.create<LLVM::StoreOp>(loc, i32(b, loc, -1), cell);
        k.lastUse.push_back(cell);
      }
    }

    int64_t perWarp = 4 * config.getMathWarpgroups();
    if (*ws.getEmptyArrivals() != perWarp &&
        *ws.getEmptyArrivals() != 32 * perWarp)
      return ws.emitError("empty-barrier arrival count ")
             << *ws.getEmptyArrivals()
             << " is neither one per math warp nor one per math thread";
    k.releasePerWarp = *ws.getEmptyArrivals() == perWarp;
    // The workers' role reduces whole rows of 16-byte units, a power of two
    // of rows at a time, over the tile's rows in steps of at least 4 rows.
    if (!ws.getWorkers().empty()) {
      k.workerThreads = ws.getWorkerThreads() ? *ws.getWorkerThreads() : 0;
      int64_t units = config.getBlockN() / 4;
      int64_t rows = units > 0 ? k.workerThreads / units : 0;
      if (units == 0 || k.workerThreads % units != 0 || rows == 0 ||
          !llvm::isPowerOf2_64(rows) || config.getBlockM() % (4 * rows) != 0)
        return ws.emitError("worker_threads ")
               << k.workerThreads << " is not a power-of-two number of rows of "
               << "block_n / 4 = " << units << " 16-byte units dividing "
               << "block_m / 4";
      if (!ws.getParkFullArrivals() || !ws.getParkEmptyArrivals())
        return ws.emitError("the workers role has no park arrival counts: "
                            "dgemm-place-sync records them when one role "
                            "writes the park and another reads it");
    }

    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(ws);
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
          /*withElse=*/k.workerThreads > 0);
      Block *body = elected.thenBlock();
      rewriter.inlineBlockBefore(&ws.getProducer().front(), body,
                                 body->begin());
      if (k.workerThreads > 0) {
        OpBuilder eb = elected.getElseBodyBuilder();
        Value from = i32(eb, loc, 32);
        auto workers = eb.create<scf::IfOp>(
            loc,
            eb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                     eb.create<arith::SubIOp>(loc, t, from),
                                     i32(eb, loc, k.workerThreads)),
            /*withElse=*/false);
        Block *wbody = workers.thenBlock();
        rewriter.inlineBlockBefore(&ws.getWorkers().front(), wbody,
                                   wbody->begin());
      }
    }
    {
      OpBuilder mb = roles.getElseBodyBuilder();
      mb.create<NVVM::SetMaxRegisterOp>(loc, ws.getMathRegs(),
                                        NVVM::SetMaxRegisterAction::increase);
      Block *body = roles.elseBlock();
      rewriter.inlineBlockBefore(&ws.getMath().front(), body,
                                 std::prev(body->end()));
    }
    // No CTA may exit while a peer can still arrive on its barriers or
    // multicast into its shared memory.
    if (config.getClusterM() > 1) {
      OpBuilder eb(ws->getContext());
      eb.setInsertionPointAfter(roles);
      clusterSync(eb, loc);
    }
    rewriter.eraseOp(ws);
    return success();
  }
};
} // namespace

void nvvm_lowering::populateSkeletonPatterns(KernelContext &k,
                                             RewritePatternSet &patterns) {
  patterns.add<WarpSpecializeLowering>(k);
}
