//===- MmaPatterns.cpp - WGMMA, its completion, and tensor-core turns -----===//
//
// A block's WGMMAs (FP8 with both operands K-major, or BF16 with either
// majorness, from shared memory), the wait
// for their completion, and the named-barrier turns in which the math
// warpgroups take the tensor cores.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

namespace {
struct MmaLowering : KernelPattern<MmaOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    // The operand descriptors are computed before the turn's wait (when the
    // stage is known there), so that only the WGMMAs remain once the turn
    // arrives. With several blocks per turn, every block's descriptors go
    // there (the walk passes the WGMMAs already lowered for the earlier
    // blocks: the turns are lowered after every dgemm.mma).
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
    // The warpgroup index is taken from lane 0 with shfl.sync.idx,
    // which ptxas knows to be warp-uniform, so A's descriptor (the only
    // per-warpgroup part) is computed in uniform registers and the WGMMAs
    // need no R2UR moves between them. It is broadcast once, at the kernel's
    // entry, where every lane of every warp is active.
    if (!k.uniformWg) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&k.entry());
      k.uniformWg = b.create<NVVM::ShflOp>(loc, b.getI32Type(), i32(b, loc, -1),
                                           mathWarpgroup(b, loc, tid(b, loc)),
                                           i32(b, loc, 0), i32(b, loc, 0x1f),
                                           NVVM::ShflKind::idx, UnitAttr());
    }
    Value wg = k.uniformWg;
    // Shared-memory tiles (docs/Kernel.md): a K-major operand is its rows of
    // 128 bytes (block_k elements), 8-row swizzle atoms 1024 bytes apart; an
    // MN-major one (BF16 only) is 64-wide column blocks of block_k rows of
    // 128 bytes, column blocks `columnBytes` apart. Either way a math
    // warpgroup's 64 rows of A start 64 * 128 bytes into the tile.
    bool bf16 = config.isBf16();
    bool mnA = config.getMajorA() == Majorness::mn;
    bool mnB = config.getMajorB() == Majorness::mn;
    int64_t rowBytes = config.getRowBytes();
    int64_t columnBytes = config.getBlockK() * 128;
    Value aOff =
        b.create<LLVM::MulOp>(loc, op.getStage(), i32(b, loc, layout.aBytes));
    aOff = b.create<LLVM::AddOp>(
        loc, aOff,
        b.create<LLVM::MulOp>(loc, wg,
                              i32(b, loc, mnA ? columnBytes : 64 * rowBytes)));
    Value aAddr = b.create<LLVM::AddOp>(loc, aOff, i32(b, loc, layout.aBase));
    int64_t colBytes = mnB ? op.getColOffset() / 64 * columnBytes
                           : op.getColOffset() * rowBytes;
    Value bAddr = b.create<LLVM::AddOp>(
        loc,
        b.create<LLVM::MulOp>(loc, op.getStage(), i32(b, loc, layout.bBytes)),
        i32(b, loc, layout.bBase + colBytes));
    // Shared-window address of the dynamic buffer.
    Value base = b.create<LLVM::AddressOfOp>(loc, smemPtr(), kSmemSymbol);
    Value base32 = b.create<LLVM::PtrToIntOp>(loc, b.getI32Type(), base);
    // 128B swizzle (layout type 1 in bits 62-63). K-major: SBO = 1024 bytes
    // (8 rows of 128 bytes), LBO unused (1). MN-major: LBO = the column
    // blocks' distance (the next 64 of M or N), SBO = 1024 bytes (the next
    // 8 rows of K).
    auto descriptor = [&](Value offset, bool mnMajor) {
      Value addr = b.create<LLVM::AddOp>(loc, base32, offset);
      Value field = b.create<LLVM::LShrOp>(
          loc, b.create<LLVM::AndOp>(loc, addr, i32(b, loc, 0x3FFFF)),
          i32(b, loc, 4));
      Value d = b.create<LLVM::ZExtOp>(loc, b.getI64Type(), field);
      int64_t lbo = mnMajor ? columnBytes >> 4 : 1;
      int64_t hi =
          (lbo << 16) | (int64_t(1024 >> 4) << 32) | (int64_t(1) << 62);
      return b.create<LLVM::OrOp>(loc, d, i64(b, loc, hi)).getResult();
    };
    Value descA = descriptor(aAddr, mnA), descB = descriptor(bAddr, mnB);
    b.setInsertionPoint(op);
    auto structType = LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(n / 2, b.getF32Type()));
    // A chained WGMMA accumulates onto the previous fragment (scale-d = 1
    // from the first instruction); otherwise the first one starts afresh.
    Value acc = b.create<LLVM::UndefOp>(loc, structType);
    if (Value chain = op.getChain())
      for (int64_t r = 0; r < n / 2; ++r)
        acc = b.create<LLVM::InsertValueOp>(
            loc, acc,
            b.create<LLVM::ExtractElementOp>(loc, chain, i32(b, loc, r)), r);
    // Orders the registers' generic accesses (the chain's initial value)
    // before the WGMMAs read them.
    b.create<NVVM::WgmmaFenceAlignedOp>(loc);
    // A K block is four WGMMAs: k32 FP8 or k16 BF16, 32 bytes of a K-major
    // row each (2 in the descriptor's 16-byte units), or 16 rows of an
    // MN-major column block (2048 bytes).
    int64_t steps = 4, kPerStep = bf16 ? 16 : 32;
    auto type = bf16 ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::e4m3;
    for (int64_t kk = 0; kk < steps; ++kk) {
      Value da = b.create<LLVM::AddOp>(
          loc, descA, i64(b, loc, kk * (mnA ? 16 * 128 : 32) / 16));
      Value db = b.create<LLVM::AddOp>(
          loc, descB, i64(b, loc, kk * (mnB ? 16 * 128 : 32) / 16));
      // The transpose bits: A "col" (imm-trans-a = 1) is M-major, B "row"
      // (imm-trans-b = 1) is N-major.
      acc = b.create<NVVM::WgmmaMmaAsyncOp>(
          loc, structType, acc, da, db,
          NVVM::MMAShapeAttr::get(ctx, 64, n, kPerStep), type, type,
          NVVM::WGMMATypes::f32,
          kk == 0 && !op.getChain() ? NVVM::WGMMAScaleOut::zero
                                    : NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          mnA ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          mnB ? NVVM::MMALayout::row : NVVM::MMALayout::col,
          NVVM::MMAIntOverflowAttr());
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
      result =
          b.create<UnrealizedConversionCastOp>(loc, op.getAcc().getType(), acc)
              .getResult(0);
    } else {
      result = b.create<LLVM::UndefOp>(loc, op.getAcc().getType());
      for (int64_t r = 0; r < n / 2; ++r)
        result = b.create<LLVM::InsertElementOp>(
            loc, result, b.create<LLVM::ExtractValueOp>(loc, acc, r),
            i32(b, loc, r));
    }
    rewriter.replaceAllUsesWith(op.getAcc(), result);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MmaWaitLowering : KernelPattern<MmaWaitOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(MmaWaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    b.create<NVVM::WgmmaWaitGroupSyncOp>(loc, op.getPending());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Named barrier 1 + w is math warpgroup w's turn; the turn goes round the
/// W math warpgroups in order. Each phase completes with the 128 threads of
/// the waiting warpgroup (bar.sync) and the 128 of the passing one
/// (bar.arrive). Barrier 0 is the CTA-wide one.
struct TurnLowering : KernelPattern<TurnOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(TurnOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    int64_t warpgroups = config.getMathWarpgroups();
    Value wg = mathWarpgroup(b, loc, tid(b, loc));
    Value one = i32(b, loc, 1);
    switch (op.getAction()) {
    case TurnAction::start: // the last warpgroup gives warpgroup 0 the first
                            // turn
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
    case TurnAction::pass: { // bar.arrive (1 + (wg + 1) % W): the next one's
                             // turn
      Value next;
      if (warpgroups == 2) {
        next = b.create<LLVM::SubOp>(loc, i32(b, loc, 2), wg);
      } else {
        Value last = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, wg,
                                            i32(b, loc, warpgroups - 1));
        next = b.create<LLVM::SelectOp>(
            loc, last, one, b.create<LLVM::AddOp>(loc, wg, i32(b, loc, 2)));
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
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void nvvm_lowering::populateMmaPatterns(KernelContext &k,
                                        RewritePatternSet &patterns) {
  patterns.add<MmaLowering, MmaWaitLowering, TurnLowering>(k);
}
