//===- ParkPatterns.cpp - Parked tiles ------------------------------------===//
//
// The parked in-place kernel (epilogue parked): the math warpgroups store a
// finished tile's sums into the park in shared memory (dgemm.park.store) and
// go on; spare threads of the producer warpgroup add the parked tile to d
// (dgemm.park.reduce). The park's barriers are dgemm-place-sync's.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

namespace {
/// dgemm.park.store (math role): the warpgroups write their sums into the
/// park, a row-major FP32 tile whose 16-byte units are XOR-swizzled with
/// the row (parkSwizzle), and the first math thread records the tile's
/// coordinates beside it. The park's barriers are dgemm-place-sync's.
struct ParkStoreLowering : KernelPattern<ParkStoreOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(ParkStoreOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // The workers add the tile to d in place: c (= d) is prefetched as for
    // the math warpgroups' own in-place epilogue.
    prefetchTileC(k, op, op.getSums(), op.getGroup(), op.getMBlock(),
                  op.getNBlock());
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
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
        c(layout.parkBase));
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
        Value at = b.create<arith::AddIOp>(loc, offs[j % 4],
                                           c(8 * i * rowBytes + 128 * (j / 4)));
        b.create<LLVM::StoreOp>(loc, sums.pair(b, loc, i, j),
                                smemAt(b, loc, at),
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
          loc,
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, t, c(128)),
          /*withElse=*/false);
      OpBuilder fb = first.getThenBodyBuilder();
      fb.create<LLVM::StoreOp>(loc, coords, parkRecord(fb, loc),
                               /*alignment=*/4);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// dgemm.park.reduce (workers' role, threads 32 .. 32 + W - 1 of the
/// producer warpgroup): read the parked tile's record (its coordinates: the
/// tile schedule is not needed) and add the sums of a tile with K blocks to
/// d with 16-byte reductions (worker w of W = workerThreads takes unit w % U
/// of rows w / U, w / U + W / U, ..., with U = block_n / 4 units per row).
/// The park's barriers are dgemm-place-sync's.
struct ParkReduceLowering : KernelPattern<ParkReduceOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(ParkReduceOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // What does not change from tile to tile (the thread's offsets in the
    // park, the tile counts) is computed once, at the start of the block that
    // holds the workers' loop.
    Operation *parent = op->getParentOp();
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    if (isa<scf::ForOp>(parent))
      b.setInsertionPointToStart(parent->getBlock());
    Location loc = op.getLoc();
    auto c = [&](int64_t v) { return i32(b, loc, v); };
    int64_t n = config.getBlockN(), rowBytes = 4 * n, units = n / 4;
    int64_t rowsPer = k.workerThreads / units;
    // The swizzle repeats every 4 rows: every step sees the same pattern.
    int64_t unroll = std::max<int64_t>(4, 8 / rowsPer);
    int64_t rowsPerStep = rowsPer * unroll,
            steps = config.getBlockM() / rowsPerStep;
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
          b.create<arith::AddIOp>(loc,
                                  b.create<arith::MulIOp>(loc, r, c(rowBytes)),
                                  b.create<arith::MulIOp>(loc, unit, c(16))),
          c(layout.parkBase));
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
      Value kPtr =
          lb.create<LLVM::GEPOp>(loc, globalPtr(), lb.getI32Type(),
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
            loc, ext(ab, nDim),
            ab.create<arith::ConstantIntOp>(loc, ab.getI64Type(), 4 * rowsPer));
        auto loop = ab.create<scf::ForOp>(loc, i32(ab, loc, 0),
                                          i32(ab, loc, steps), i32(ab, loc, 1));
        OpBuilder sb = OpBuilder::atBlockBegin(loop.getBody());
        Value s = loop.getInductionVar();
        Value rowS =
            sb.create<arith::MulIOp>(loc, s, i32(sb, loc, rowsPerStep));
        Value smemS = sb.create<arith::MulIOp>(
            loc, s, i32(sb, loc, rowsPerStep * rowBytes));
        auto v4 = VectorType::get({4}, sb.getF32Type());
        SmallVector<Value> vals;
        for (int64_t kk = 0; kk < unroll; ++kk)
          vals.push_back(sb.create<LLVM::LoadOp>(
              loc, v4,
              smemAt(sb, loc,
                     sb.create<arith::AddIOp>(loc, smemOff[kk], smemS)),
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
                  sb.create<arith::MulIOp>(loc, ext(sb, s),
                                           sb.create<arith::ConstantIntOp>(
                                               loc, sb.getI64Type(), unroll)),
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
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void nvvm_lowering::populateParkPatterns(KernelContext &k,
                                         RewritePatternSet &patterns) {
  patterns.add<ParkStoreLowering, ParkReduceLowering>(k);
}
