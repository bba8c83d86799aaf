//===- TmaLoad.cpp - TMA loads and the descriptor-slot drains -------------===//
//
// A multicast dgemm.tma.load becomes nvgpu.tma.async.load into its stage's
// tile, completing on the stage's full barrier; a load into this CTA only
// stays on dgemm's shared::cta form (docs/UpstreamNVGPU.md). A load through a
// rewritten descriptor slot also records its pipeline iteration in the
// producer's bookkeeping cells, which dgemm.desc.drain reads: the drain
// becomes a loop of full-barrier waits over the iterations that may still
// read the slot.
//
//===----------------------------------------------------------------------===//

#include "NVGPUPatterns.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvgpu_lowering;

void nvgpu_lowering::createDescriptorCells(KernelContext &k) {
  OpBuilder b(k.ctx);
  b.setInsertionPointToStart(&k.entry());
  Location loc = k.kernel->getLoc();
  auto i32 = [&](int64_t v) {
    return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
  };
  // At the entry, so that SROA promotes them to registers.
  for (int64_t r = 0; r < k.config.getDescSlots(); ++r) {
    Value cell = b.create<LLVM::AllocaOp>(
        loc, LLVM::LLVMPointerType::get(k.ctx), b.getI32Type(), i32(1));
    b.create<LLVM::StoreOp>(loc, i32(-1), cell);
    k.lastUse.push_back(cell);
  }
}

namespace {
struct TmaLoadLowering : NVGPUPattern<TmaLoadOp> {
  using NVGPUPattern::NVGPUPattern;
  LogicalResult
  matchAndRewrite(TmaLoadOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    OpBuilder &b = rewriter;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    TmaOperand operand = op.getOperand();
    // The destination first, in the order the former NVVM lowering built
    // it, which keeps the PTX as it was.
    Value dst = stagePtr(b, loc, operand, op.getStage());
    // A and B: a rewritten descriptor slot, or the kernel-parameter map in a
    // kernel that rewrites none (m-grouped).
    KernelOp::Arg param = operand == TmaOperand::a     ? KernelOp::TmapA
                          : operand == TmaOperand::b   ? KernelOp::TmapB
                          : operand == TmaOperand::sfa ? KernelOp::TmapSFA
                                                       : KernelOp::TmapSFB;
    Value map = arg(param);
    if (Value slot = op.getSlot()) {
      map = toGeneric(b, loc, slotAddress(b, loc, operand, slot));
      // Remember the iteration for the drain before the slot's next rewrite.
      recordUse(b, loc, slot,
                op.getStage().getDefiningOp<StageOp>().getIteration());
    }
    if (op.getMulticast())
      loadShare(b, loc, op, dst, map);
    else
      loadLocal(b, loc, op, dst, map);
    rewriter.eraseOp(op);
    return success();
  }

private:
  /// The box's coordinates in the tensor map. Quad-ordered B rows: the map
  /// is 5-D (K, c, q, h, g) over rows 16g + 4q + 2h + c, written to shared
  /// memory as row 16g + 8h + 2q + c; the box starts at row y, a multiple of
  /// 16.
  SmallVector<Value> boxCoords(OpBuilder &b, Location loc, TmaLoadOp op) const {
    if (!quadB || op.getOperand() != TmaOperand::b)
      return {op.getX(), op.getY()};
    Value zero = i32(b, loc, 0);
    return {op.getX(), zero, zero, zero,
            b.create<LLVM::LShrOp>(loc, op.getY(), i32(b, loc, 4))};
  }

  /// A multicast load: this CTA's share of the B tile, written at the same
  /// offset of the stage in every CTA of the cluster, completing its bytes on
  /// each one's full barrier.
  void loadShare(OpBuilder &b, Location loc, TmaLoadOp op, Value tile,
                 Value map) const {
    Value bars = barrierGroup(b, loc, BarrierKind::full, op.getStage());
    Value bar = barrierIndex(b, loc);
    Value dst = stageTile(b, loc, op.getOperand(), /*share=*/true, tile);
    Value mask = b.create<LLVM::ConstantOp>(
        loc, b.getI16Type(),
        b.getI16IntegerAttr((1 << config.getClusterM()) - 1));
    SmallVector<Value> indices;
    for (Value c : boxCoords(b, loc, op))
      indices.push_back(index(b, loc, c));
    Value desc = tensorMap(b, loc, op.getOperand(), true, map);
    b.create<nvgpu::TmaAsyncLoadOp>(loc, dst, bars, desc, indices, bar, mask,
                                    /*predicate=*/Value());
  }

  /// A load into this CTA only: cp.async.bulk.tensor with a shared::cta
  /// destination, which nvgpu.tma.async.load does not emit (it names every
  /// destination in the shared::cluster window; docs/UpstreamNVGPU.md).
  ///
  /// An MN-major BF16 operand (major_a/major_b = mn) is loaded as rows / 64
  /// boxes of 64 (M or N) x block_k (K): a 128B-swizzle box row holds 64
  /// BF16, so the tile is column blocks of block_k rows of 128 bytes, one
  /// after the other (the layout its WGMMA descriptor's leading byte
  /// offset steps over; MmaPatterns.cpp). The op's x is the first M or N.
  void loadLocal(OpBuilder &b, Location loc, TmaLoadOp op, Value dst,
                 Value map) const {
    Value bar = barrier(b, loc, BarrierKind::full, op.getStage());
    SmallVector<Value> coords = boxCoords(b, loc, op);
    auto copy = [&](Value to, ArrayRef<Value> at) {
      b.create<NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp>(
          loc, to, map, at, bar, ValueRange{}, /*multicastMask=*/Value(),
          /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE, /*isCTAOnly=*/true,
          NVVM::CTAGroupKindAttr(), /*predicate=*/Value());
    };
    int64_t columns = mnMajorColumns(op.getOperand());
    if (columns == 0)
      return copy(dst, coords);
    // block_k rows of 128 bytes (64 BF16 of M or N) per column block.
    int64_t columnBytes = config.getBlockK() * 128;
    for (int64_t c = 0; c < columns; ++c) {
      Value to = b.create<LLVM::GEPOp>(loc, dst.getType(), b.getI8Type(), dst,
                                       ArrayRef<LLVM::GEPArg>{c * columnBytes});
      Value x = b.create<LLVM::AddOp>(loc, coords[0], i32(b, loc, 64 * c));
      copy(to, {x, coords[1]});
    }
  }

  /// The 64-wide column blocks of an MN-major operand's tile (0: the
  /// operand is K-major, one box).
  int64_t mnMajorColumns(TmaOperand operand) const {
    if (operand == TmaOperand::a && config.getMajorA() == Majorness::mn)
      return config.getBlockM() / 64;
    if (operand == TmaOperand::b && config.getMajorB() == Majorness::mn)
      return config.getBlockN() / 64;
    return 0;
  }
};

struct DescDrainToWaits : NVGPUPattern<DescDrainOp> {
  using NVGPUPattern::NVGPUPattern;
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
    // The waits are dgemm's (docs/UpstreamNVGPU.md: why not nvgpu's
    // try_wait.parity); convert-dgemm-to-nvvm lowers them and the
    // iteration -> (stage, parity) map.
    auto st = b.create<StageOp>(loc, b.getI32Type(), b.getI32Type(),
                                loop.getInductionVar(),
                                b.getI32IntegerAttr(layout.stages));
    b.create<WaitOp>(loc, BarrierKind::full, st.getStage(), st.getPhase());
    rewriter.eraseOp(op);
    return success();
  }
};
} // namespace

void nvgpu_lowering::populateTmaLoadPatterns(KernelContext &k,
                                             const LLVMTypeConverter &converter,
                                             RewritePatternSet &patterns) {
  patterns.add<TmaLoadLowering, DescDrainToWaits>(k, converter);
}
