//===- KernelSkeleton.cpp - The kernel function and its roles -------------===//
//
// dgemm.kernel becomes an llvm.func kernel (tensor maps as by-value grid
// constants), and dgemm.warp_specialize the CTA's role dispatch: the
// register split (setmaxnreg) and the producer / workers / math branches the
// roles' ops are moved into. The barriers' initialization before it is
// convert-dgemm-to-nvgpu's.
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
    }

    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(ws);
    Value t = tid(b, loc);
    Value zero = i32(b, loc, 0);
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
