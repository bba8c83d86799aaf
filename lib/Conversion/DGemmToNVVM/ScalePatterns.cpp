//===- ScalePatterns.cpp - Scales and FP32 promotion ----------------------===//
//
// The 1D1D block scales: a stage's sfa/sfb values read from shared memory
// into registers (dgemm.load_scales) and the promotion of a block's WGMMA
// fragment into the FP32 sums with them (dgemm.promote).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

namespace {
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

/// A pattern that reads a stage's scales.
template <typename Op> struct ScalePattern : KernelPattern<Op> {
  using KernelPattern<Op>::KernelPattern;
  StageScales stageScalesOf(OpBuilder &b, Location loc, Value stage) const {
    return {this->stageBuffer(b, loc, this->layout.sfaBase,
                              this->layout.sfaBytes, stage),
            this->stageBuffer(b, loc, this->layout.sfbBase,
                              this->layout.sfbBytes, stage),
            fragmentOf(b, loc, this->tid(b, loc), this->quadB)};
  }
};

struct LoadScalesLowering : ScalePattern<LoadScalesOp> {
  using ScalePattern::ScalePattern;
  LogicalResult
  matchAndRewrite(LoadScalesOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    StageScales st = stageScalesOf(b, loc, op.getStage());
    // [sfa(row), sfa(row + 8), sfb(col), sfb(col + 1), sfb(col + 8), ...]
    Value scales = b.create<LLVM::UndefOp>(loc, op.getScales().getType());
    for (int i = 0; i < 2; ++i)
      scales = b.create<LLVM::InsertElementOp>(loc, scales, st.sfaOf(b, loc, i),
                                               i32(b, loc, i));
    int64_t j0 = op.getColOffset() / 8;
    int64_t groups =
        (cast<VectorType>(op.getScales().getType()).getNumElements() - 2) / 2;
    SfbLoads loaded;
    for (int64_t j = 0; j < groups; ++j)
      for (int c = 0; c < 2; ++c) {
        Value v = sfbValue(b, loc, st, j0 + j, c, j0, j0 + groups, loaded);
        scales = b.create<LLVM::InsertElementOp>(loc, scales, v,
                                                 i32(b, loc, 2 + 2 * j + c));
      }
    rewriter.replaceAllUsesWith(op.getScales(), scales);
    rewriter.eraseOp(op);
    return success();
  }
};

struct PromoteLowering : ScalePattern<PromoteOp> {
  using ScalePattern::ScalePattern;
  LogicalResult
  matchAndRewrite(PromoteOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
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
      st = stageScalesOf(b, loc, op.getStage());
    SfbLoads loaded;
    // The groups whose sfb values come from the stage: the slice's groups
    // after those held in registers (a quad load needs both of its groups
    // there).
    int64_t firstLoaded = j0 + (held > 2 ? (held - 2) / 2 : 0);
    // Index idx of the slice's scales: 2 sfa, then sfb pairs of its 8-column
    // groups (j0, j0 + 1, ...).
    auto scaleAt = [&](int64_t idx) -> Value {
      // The 1D2D recipe: one B scale for every column.
      if (idx >= 2 && op.getBlockScale())
        return op.getBlockScale();
      if (idx < held)
        return b.create<LLVM::ExtractElementOp>(loc, scales, i32(b, loc, idx));
      if (idx < 2)
        return st->sfaOf(b, loc, idx);
      int64_t j = (idx - 2) / 2, c = (idx - 2) % 2;
      return sfbValue(b, loc, *st, j0 + j, c, firstLoaded, j0 + n / 8, loaded);
    };
    Value sum = op.getSum();
    Value sa[2] = {scaleAt(0), scaleAt(1)};
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
    rewriter.replaceAllUsesWith(op.getResult(), sum);
    rewriter.eraseOp(op);
    if (cast && cast.use_empty())
      rewriter.eraseOp(cast);
    return success();
  }
};
} // namespace

void nvvm_lowering::populateScalePatterns(KernelContext &k,
                                          RewritePatternSet &patterns) {
  patterns.add<LoadScalesLowering, PromoteLowering>(k);
}
