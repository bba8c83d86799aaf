//===- MGroupedPatterns.cpp - The m-grouped kernel's own ops --------------===//
//
// dgemm.load_block_scale (a 128x128 B scale from global memory) and
// dgemm.store_rows (the BF16 epilogue that writes only the rows of the
// tile's group: by the grouped layout, or below a row limit).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

namespace {
/// i64 of an i32 that is non-negative.
Value ext64(OpBuilder &b, Location loc, Value v) {
  return b.create<arith::ExtUIOp>(loc, b.getI64Type(), v);
}

struct LoadBlockScaleLowering : KernelPattern<LoadBlockScaleOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(LoadBlockScaleOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
    };
    auto ceil128 = [&](Value v) {
      return b.create<arith::DivUIOp>(
          loc, b.create<arith::AddIOp>(loc, v, c(127)), c(128));
    };
    // (group * ceil(N / 128) + n_block * block_n / 128) * ceil(K / 128) + kb
    // in 64 bits: G * ceil(N/128) * ceil(K/128) may pass 2^31.
    Value nBlocks128 = ceil128(arg(KernelOp::DimN));
    Value kBlocks128 = ceil128(arg(KernelOp::DimK));
    Value col128 = b.create<arith::DivUIOp>(
        loc, b.create<arith::MulIOp>(loc, op.getNBlock(), c(config.getBlockN())),
        c(128));
    Value rowOf = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(loc, ext64(b, loc, op.getGroup()),
                                ext64(b, loc, nBlocks128)),
        ext64(b, loc, col128));
    Value index = b.create<arith::AddIOp>(
        loc, b.create<arith::MulIOp>(loc, rowOf, ext64(b, loc, kBlocks128)),
        ext64(b, loc, op.getKBlock()));
    Value ptr = b.create<LLVM::GEPOp>(loc, globalPtr(), b.getF32Type(),
                                      arg(KernelOp::PtrSFB), ValueRange{index});
    // Every thread of a warp reads the same address: one broadcast load
    // through the non-coherent (read-only) path.
    Value scale =
        b.create<LLVM::InlineAsmOp>(
             loc, b.getF32Type(), ValueRange{ptr},
             "ld.global.nc.f32 $0, [$1];", "=f,l", /*has_side_effects=*/false,
             false, LLVM::TailCallKind::None, LLVM::AsmDialectAttr(),
             ArrayAttr())
            .getResult(0);
    rewriter.replaceOp(op, scale);
    return success();
  }
};

/// Whether a tile row is stored and the d row it goes to (64-bit).
struct RowTarget {
  Value ok, dRow;
};

/// Without a limit: d row `row`, stored when row < M and the grouped
/// layout's entry of the row (read at an index clamped into [0, M): rows
/// past M_sum are not written either way) is the tile's non-negative group.
RowTarget layoutRow(OpBuilder &b, Location loc, StoreRowsOp op, Value row,
                    Value m, Value ks) {
  Value lastRow = b.create<arith::SubIOp>(
      loc, m, b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 1));
  Value clamped = b.create<arith::MinUIOp>(loc, row, lastRow);
  Value entry = b.create<LLVM::LoadOp>(
      loc, b.getI32Type(),
      b.create<LLVM::GEPOp>(loc, ks.getType(), b.getI32Type(), ks,
                            ValueRange{clamped}));
  Value zero = b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 0);
  Value ok = b.create<arith::AndIOp>(
      loc,
      b.create<arith::AndIOp>(
          loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, m),
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, entry,
                                  op.getGroup())),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, op.getGroup(),
                              zero));
  return {ok, ext64(b, loc, row)};
}

/// With a limit: d row group * M + row, stored when row < limit (<= M).
RowTarget limitedRow(OpBuilder &b, Location loc, StoreRowsOp op, Value row,
                     Value m) {
  Value ok = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row,
                                     op.getLimit());
  Value base = b.create<arith::MulIOp>(loc, ext64(b, loc, op.getGroup()),
                                       ext64(b, loc, m));
  return {ok, b.create<arith::AddIOp>(loc, base, ext64(b, loc, row))};
}

struct StoreRowsLowering : KernelPattern<StoreRowsOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(StoreRowsOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    auto c = [&](int64_t v) {
      return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
    };
    Fragment f = fragmentOf(b, loc, tid(b, loc), /*quads=*/false);
    SumPairs sums(op.getSums());
    Value m = arg(KernelOp::DimM), n = arg(KernelOp::DimN);
    Value m0 = b.create<arith::MulIOp>(loc, op.getMBlock(), c(config.getBlockM()));
    Value n0 = b.create<arith::MulIOp>(loc, op.getNBlock(), c(config.getBlockN()));
    Value colBase = b.create<arith::AddIOp>(loc, n0, f.colInTile);
    auto bf16x2 = VectorType::get({2}, b.getBF16Type());
    // A BF16 kernel's FP32 d (d_f32): the sums stored as they are.
    bool dF32 = config.getDF32() != 0;
    for (int i = 0; i < 2; ++i) {
      Value row = b.create<arith::AddIOp>(
          loc, m0, b.create<arith::AddIOp>(loc, f.rowInTile, c(8 * i)));
      RowTarget target =
          op.getLimit() ? limitedRow(b, loc, op, row, m)
                        : layoutRow(b, loc, op, row, m, arg(KernelOp::PtrKs));
      Value rowStart =
          b.create<arith::MulIOp>(loc, target.dRow, ext64(b, loc, n));
      for (int64_t j = 0; j < config.getBlockN() / 8; ++j) {
        Value col = b.create<arith::AddIOp>(loc, colBase, c(8 * j));
        Value ok = b.create<arith::AndIOp>(
            loc, target.ok,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, n));
        Value pair = sums.pair(b, loc, i, j);
        if (!dF32)
          pair = b.create<LLVM::FPTruncOp>(loc, bf16x2, pair);
        auto guard = b.create<scf::IfOp>(loc, ok, /*withElse=*/false);
        OpBuilder gb = guard.getThenBodyBuilder();
        Value at = gb.create<arith::AddIOp>(loc, rowStart, ext64(gb, loc, col));
        Value ptr = gb.create<LLVM::GEPOp>(
            loc, globalPtr(), dF32 ? gb.getF32Type() : gb.getBF16Type(),
            arg(KernelOp::PtrD), ValueRange{at});
        // An accumulating kernel adds d's two values (c is d; only this
        // thread reads and writes them).
        if (config.getAccumulate())
          pair = gb.create<LLVM::FAddOp>(
              loc, pair,
              gb.create<LLVM::LoadOp>(loc, pair.getType(), ptr,
                                      /*alignment=*/8));
        gb.create<LLVM::StoreOp>(loc, pair, ptr, /*alignment=*/dF32 ? 8 : 4);
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void nvvm_lowering::populateMGroupedPatterns(KernelContext &k,
                                             RewritePatternSet &patterns) {
  patterns.add<LoadBlockScaleLowering, StoreRowsLowering>(k);
}
