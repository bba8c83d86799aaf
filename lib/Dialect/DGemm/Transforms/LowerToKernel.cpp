//===- LowerToKernel.cpp - Build the warp-specialized kernel --------------===//
//
// Turns a configured k_grouped_contiguous dgemm.gemm into a dgemm.kernel. The
// kernel declares what each asynchronous operation reads and writes and holds
// no synchronization at all: dgemm-place-sync adds it.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"
#include "dgemm/Heuristics/KernelConfig.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace mlir::dgemm {
#define GEN_PASS_DEF_DGEMMLOWERTOKERNEL
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;

namespace {

/// Small arithmetic helpers on i32/i64 values.
struct Emitter {
  OpBuilder &b;
  Location loc;

  Value i32(int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
  }
  Value i64(int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, b.getI64Type(), v);
  }
  Value add(Value x, Value y) { return b.create<arith::AddIOp>(loc, x, y); }
  Value sub(Value x, Value y) { return b.create<arith::SubIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.create<arith::MulIOp>(loc, x, y); }
  Value div(Value x, Value y) { return b.create<arith::DivUIOp>(loc, x, y); }
  Value rem(Value x, Value y) { return b.create<arith::RemUIOp>(loc, x, y); }
  Value ceilDiv(Value x, int64_t d) { return div(add(x, i32(d - 1)), i32(d)); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, p, x, y);
  }
  Value ext64(Value x) {
    return b.create<arith::ExtUIOp>(loc, b.getI64Type(), x);
  }
  /// `x` through an empty asm with side effects: the same value, but one
  /// that LLVM cannot hoist out of the loop it is read in, so that what is
  /// computed from it is computed there and holds no register across the
  /// loop (ptxas reads a kernel parameter from the constant bank at each
  /// use).
  Value opaque(Value x) {
    return b
        .create<LLVM::InlineAsmOp>(loc, b.getI32Type(), ValueRange{x},
                                   "mov.b32 $0, $1;", "=r,r",
                                   /*has_side_effects=*/true, false,
                                   LLVM::TailCallKind::None,
                                   LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  }
  /// ks[g] from the kernel's int32 device array.
  Value loadK(Value ks, Value g) {
    auto gep = b.create<LLVM::GEPOp>(loc, ks.getType(), b.getI32Type(), ks,
                                     ValueRange{g});
    return b.create<LLVM::LoadOp>(loc, b.getI32Type(), gep);
  }
};

/// The persistent tile schedule both roles walk: tile t = blockIdx.x, then
/// every gridDim.x-th tile; tiles are ordered (group, m-block, n-block).
/// With cluster_m = 2 the unit is a pair of m-blocks: cluster c (CTAs 2c and
/// 2c + 1, its rank being blockIdx.x % 2) takes pair c, then every
/// (gridDim.x / 2)-th pair, and rank r computes m-block 2 * pair + r. Both
/// CTAs of a cluster thus always work on the same group and n-block (the B
/// tile they share) with the same K. When the m-block count is odd the last
/// pair's second m-block lies past M: its CTA loads zeros (TMA fills out of
/// bounds) and stores nothing, but keeps the cluster's pipeline in step.
///
/// Each group's units are walked in bands of B m-units, B being the launch's
/// raster band (in m-blocks; docs/KernelABI.md) divided by cluster_m, at
/// least 1 and at most the group's m-unit count: band by band, and inside a
/// band n-block by n-block with the m-unit varying fastest (the last band
/// may be narrower). B = 1 is row order (n-block fastest). With B > 1 the
/// CTAs running at one time share more rows of B than in row order, where
/// for wide N every row of units sweeps all of the group's B; the runtime
/// chooses the band per call (docs/Heuristics.md).
struct TileSchedule {
  Value first, step, total, tilesPerGroup, nBlocks, mUnits;
  Value rank; ///< this CTA's rank in its cluster; null without clusters
  int64_t clusterM = 1;
  Value bandArg; ///< the launch's raster band, in m-blocks

  static TileSchedule build(Emitter &e, KernelOp kernel, ConfigAttr config) {
    TileSchedule s;
    s.clusterM = config.getClusterM();
    Value cta = e.b.create<NVVM::BlockIdXOp>(e.loc, e.b.getI32Type());
    Value grid = e.b.create<NVVM::GridDimXOp>(e.loc, e.b.getI32Type());
    s.first = s.clusterM == 1 ? cta : e.div(cta, e.i32(s.clusterM));
    s.step = s.clusterM == 1 ? grid : e.div(grid, e.i32(s.clusterM));
    if (s.clusterM != 1)
      s.rank = e.rem(cta, e.i32(s.clusterM));
    Value mBlocks = e.ceilDiv(kernel.getArg(KernelOp::DimM), config.getBlockM());
    s.mUnits = s.clusterM == 1 ? mBlocks : e.ceilDiv(mBlocks, s.clusterM);
    s.nBlocks = e.ceilDiv(kernel.getArg(KernelOp::DimN), config.getBlockN());
    s.tilesPerGroup = e.mul(s.mUnits, s.nBlocks);
    s.total = e.mul(s.tilesPerGroup, kernel.getArg(KernelOp::NumGroups));
    s.bandArg = kernel.getArg(KernelOp::RasterBand);
    return s;
  }

  /// (group, m-block, n-block) of schedule unit `t` for this CTA.
  std::tuple<Value, Value, Value> decompose(Emitter &e, Value t) const {
    Value g = e.div(t, tilesPerGroup);
    Value r = e.rem(t, tilesPerGroup);
    // Units per band, in [1, mUnits], so that band * nBlocks cannot
    // overflow; computed here for every tile (Emitter::opaque) rather than
    // once before the tile loop, where it held two registers across the
    // loop and made a 64-row kernel spill.
    Value band = e.opaque(bandArg);
    if (clusterM != 1)
      band = e.div(band, e.i32(clusterM));
    band = e.b.create<arith::MaxUIOp>(e.loc, band, e.i32(1));
    band = e.b.create<arith::MinUIOp>(e.loc, band, mUnits);
    Value bandUnits = e.mul(band, nBlocks);
    Value start = e.mul(e.div(r, bandUnits), band);
    Value inBand = e.rem(r, bandUnits);
    Value rows = e.b.create<arith::MinUIOp>(e.loc, band, e.sub(mUnits, start));
    Value mu = e.add(start, e.rem(inBand, rows));
    Value nb = e.div(inBand, rows);
    Value mb = mu;
    if (clusterM != 1)
      mb = e.add(e.mul(mu, e.i32(clusterM)), rank);
    return {g, mb, nb};
  }
};

class KernelBuilder {
public:
  KernelBuilder(GemmOp gemm, OpBuilder &builder, int64_t scaleRegisterBudget,
                int64_t mmaSlices, bool scalesBeforeMma,
                bool alternateWarpgroups, bool passAfterIssue,
                bool prefetchNextC, int64_t blocksPerTurn,
                bool overlapPromotion, int64_t scalePrefixCols,
                bool deferEpilogue, bool reloadSfaAfterTurn,
                bool narrowTailMma)
      : gemm(gemm), b(builder), loc(gemm.getLoc()), config(*gemm.getConfig()),
        scaleRegisterBudget(scaleRegisterBudget), mmaSlices(mmaSlices),
        scalesBeforeMma(scalesBeforeMma),
        alternateWarpgroups(alternateWarpgroups),
        passAfterIssue(passAfterIssue), prefetchNextC(prefetchNextC),
        blocksPerTurn(blocksPerTurn),
        overlapPromotion(overlapPromotion), scalePrefixCols(scalePrefixCols),
        deferEpilogue(deferEpilogue), reloadSfaAfterTurn(reloadSfaAfterTurn),
        narrowTailMma(narrowTailMma) {}

  /// Whether a second WGMMA fragment fits the registers next to the first
  /// and the FP32 sum (3 x block_n / 2 values per thread at most 192).
  static bool secondFragmentFits(ConfigAttr config) {
    return config.getMathWarpgroups() <= 2 &&
           3 * config.getBlockN() / 2 <= 192;
  }

  /// Registers per math thread (setmaxnreg): what the 64K register file
  /// leaves after the producer warpgroup's share, a multiple of 8. One math
  /// warpgroup takes 240, two 232 (the producer keeps 40), three 160 (the
  /// producer keeps 32: 128 * 32 + 384 * 160 = 65536).
  static int64_t mathRegisters(ConfigAttr config) {
    switch (config.getMathWarpgroups()) {
    case 1:
      return 240;
    case 2:
      return 232;
    default:
      return 160;
    }
  }
  static int64_t producerRegisters(ConfigAttr config) {
    return config.getMathWarpgroups() <= 2 ? 40 : 32;
  }

  /// The scale-register budget for this kernel: the option's value is for
  /// the 232 registers of two math warpgroups; fewer registers lower it by
  /// as many.
  int64_t scaleBudget() const {
    return scaleRegisterBudget - (232 - mathRegisters(config));
  }

  /// Whether the kernel promotes each block while the next block's WGMMAs
  /// run (overlap-promotion): one column slice with room for two fragments.
  static bool overlaps(ConfigAttr config, bool requested, int64_t slices) {
    return requested && secondFragmentFits(config) &&
           sliceWidths(config.getBlockN(), slices).size() == 1;
  }

  /// Records on a block loop which blocks its iteration i issues: `per`
  /// blocks from per * i + `first` (convert-dgemm-to-nvvm places the c
  /// prefetch by it).
  void markBlockLoop(scf::ForOp loop, int64_t per, int64_t first) {
    loop->setAttr("dgemm.first_block", b.getI64ArrayAttr({per, first}));
  }

  /// Column widths of the slices a block product is split into: `slices`
  /// near-equal widths, each a multiple of 8 (a WGMMA N and a swizzle atom
  /// of B rows); fewer when the tile is too narrow.
  static SmallVector<int64_t> sliceWidths(int64_t blockN, int64_t slices) {
    slices = std::max<int64_t>(1, std::min(slices, blockN / 8));
    SmallVector<int64_t> widths;
    int64_t left = blockN;
    for (int64_t i = slices; i > 0; --i) {
      int64_t w = llvm::alignTo(llvm::divideCeil(left, i), 8);
      w = std::min(w, left);
      if (w == 0)
        break;
      widths.push_back(w);
      left -= w;
    }
    return widths;
  }

  KernelOp build() {
    MLIRContext *ctx = b.getContext();
    auto kernel = b.create<KernelOp>(loc, config.getEntryName(), config);
    Block *entry = new Block();
    kernel.getBody().push_back(entry);
    auto genericPtr = LLVM::LLVMPointerType::get(ctx);
    auto globalPtr = LLVM::LLVMPointerType::get(ctx, 1);
    for (int i = 0; i < KernelOp::NumArgs; ++i) {
      Type t = i < KernelOp::PtrA  ? Type(genericPtr)
               : i < KernelOp::DimM ? Type(globalPtr)
                                    : Type(b.getI32Type());
      entry->addArgument(t, loc);
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(entry);
    // Producer: one thread, few registers; math: the rest of the 64K file.
    auto ws = b.create<WarpSpecializeOp>(
        loc, b.getI32IntegerAttr(producerRegisters(config)),
        b.getI32IntegerAttr(mathRegisters(config)), IntegerAttr(),
        IntegerAttr(), IntegerAttr(), IntegerAttr(), IntegerAttr());
    ws.getProducer().push_back(new Block());
    ws.getMath().push_back(new Block());
    b.setInsertionPointToStart(&ws.getProducer().front());
    buildProducer(kernel);
    b.setInsertionPointToStart(&ws.getMath().front());
    buildMath(kernel);
    if (config.getPark()) {
      ws.setWorkerThreadsAttr(b.getI32IntegerAttr(parkWorkers(config)));
      ws.getWorkers().push_back(new Block());
      b.setInsertionPointToStart(&ws.getWorkers().front());
      buildWorkers(kernel);
    }
    return kernel;
  }

  /// Threads that add a parked tile to d (park = 1): the tile's rows are
  /// block_n / 4 16-byte units, and the workers take as many whole rows at
  /// a time as a power of two of them fits in the 96 threads the producer
  /// leaves idle (warps 1-3 of warpgroup 0).
  static int64_t parkWorkers(ConfigAttr config) {
    int64_t units = config.getBlockN() / 4, rows = 1;
    while (2 * rows * units <= 96)
      rows *= 2;
    return rows * units;
  }

private:
  Value stageOf(Emitter &e, Value it, Value *phase) {
    auto st = b.create<StageOp>(loc, b.getI32Type(), b.getI32Type(), it,
                                b.getI32IntegerAttr(config.getStages()));
    if (phase)
      *phase = st.getPhase();
    return st.getStage();
  }

  void buildProducer(KernelOp kernel) {
    Emitter e{b, loc};
    TileSchedule sched = TileSchedule::build(e, kernel, config);
    Value ks = kernel.getArg(KernelOp::PtrKs);
    int64_t slots = config.getDescSlots();
    // Loop state: pipeline iteration, group whose K prefix is known and that
    // prefix, the group the current descriptor slot describes, and the slot.
    SmallVector<Value> init = {e.i32(0), e.i32(0), e.i64(0), e.i32(-1),
                               e.i32(slots - 1)};
    auto tiles = b.create<scf::ForOp>(loc, sched.first, sched.total, sched.step,
                                      init);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value t = tiles.getInductionVar();
    Value it = tiles.getRegionIterArg(0), knownGroup = tiles.getRegionIterArg(1),
          knownPrefix = tiles.getRegionIterArg(2),
          descGroup = tiles.getRegionIterArg(3),
          slot = tiles.getRegionIterArg(4);
    auto [g, mb, nb] = sched.decompose(e, t);

    // K prefix of group g, walking forward from the last group seen (the
    // walk is monotone, so each ks entry is read once per CTA).
    auto walk = b.create<scf::ForOp>(loc, knownGroup, g, e.i32(1),
                                     ValueRange{knownPrefix});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(walk.getBody());
      Value k = e.loadK(ks, walk.getInductionVar());
      b.create<scf::YieldOp>(
          loc, ValueRange{e.add(walk.getRegionIterArg(0), e.ext64(k))});
    }
    Value prefix = walk.getResult(0);
    Value kg = e.loadK(ks, g);
    Value numKBlocks = e.div(kg, e.i32(128));

    // A group switch rewrites the next descriptor slot for A and B.
    Value switching = b.create<arith::AndIOp>(
        loc, e.cmp(arith::CmpIPredicate::ne, g, descGroup),
        e.cmp(arith::CmpIPredicate::sgt, kg, e.i32(0)));
    auto ifSwitch = b.create<scf::IfOp>(loc, TypeRange{b.getI32Type()},
                                        switching, true, true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&ifSwitch.getThenRegion().front());
      Value next = e.rem(e.add(slot, e.i32(1)), e.i32(slots));
      for (TmaOperand op : {TmaOperand::a, TmaOperand::b})
        b.create<DescUpdateOp>(loc, op, next, g, prefix, kg, it);
      b.create<scf::YieldOp>(loc, next);
      b.setInsertionPointToStart(&ifSwitch.getElseRegion().front());
      b.create<scf::YieldOp>(loc, slot);
    }
    Value curSlot = ifSwitch.getResult(0);
    Value newDescGroup = b.create<arith::SelectOp>(loc, switching, g, descGroup);

    // The K loop: one stage per 128-deep block.
    Value kbBase = e.b.create<arith::TruncIOp>(
        loc, b.getI32Type(),
        b.create<arith::DivUIOp>(loc, prefix, e.i64(128)));
    auto kloop = b.create<scf::ForOp>(loc, e.i32(0), numKBlocks, e.i32(1),
                                      ValueRange{it});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(kloop.getBody());
      Value kb = kloop.getInductionVar();
      Value kit = kloop.getRegionIterArg(0);
      Value stage = stageOf(e, kit, nullptr);
      Value kx = e.mul(kb, e.i32(128));
      Value m0 = e.mul(mb, e.i32(config.getBlockM()));
      Value n0 = e.mul(nb, e.i32(config.getBlockN()));
      Value kbg = e.add(kbBase, kb);
      b.create<TmaLoadOp>(loc, TmaOperand::a, stage, kx, m0, curSlot,
                          /*multicast=*/false);
      if (sched.clusterM == 1) {
        b.create<TmaLoadOp>(loc, TmaOperand::b, stage, kx, n0, curSlot,
                            /*multicast=*/false);
      } else {
        // This CTA's share of the B tile, multicast to the whole cluster.
        Value half = e.i32(config.getBlockN() / sched.clusterM);
        b.create<TmaLoadOp>(loc, TmaOperand::b, stage, kx,
                            e.add(n0, e.mul(sched.rank, half)), curSlot,
                            /*multicast=*/true);
      }
      b.create<TmaLoadOp>(loc, TmaOperand::sfa, stage, m0, kbg, Value(),
                          /*multicast=*/false);
      b.create<TmaLoadOp>(loc, TmaOperand::sfb, stage, n0, kbg, Value(),
                          /*multicast=*/false);
      b.create<scf::YieldOp>(loc, ValueRange{e.add(kit, e.i32(1))});
    }
    b.create<scf::YieldOp>(loc, ValueRange{kloop.getResult(0), g, prefix,
                                           newDescGroup, curSlot});
  }

  /// The workers' role (park = 1): the CTA's tiles in the math role's
  /// order, each taken from the park once the math role parked it. The
  /// park's slot and phase come from the count of tiles walked, as in
  /// emitEpilogue.
  void buildWorkers(KernelOp kernel) {
    Emitter e{b, loc};
    // TileSchedule's bounds without a cluster (park = 1 has none), the
    // tile count first: dgemm-verify-sync checks that they are computed as
    // the math role's are.
    Value total = e.mul(
        e.mul(e.ceilDiv(kernel.getArg(KernelOp::DimM), config.getBlockM()),
              e.ceilDiv(kernel.getArg(KernelOp::DimN), config.getBlockN())),
        kernel.getArg(KernelOp::NumGroups));
    Value first = b.create<NVVM::BlockIdXOp>(loc, b.getI32Type());
    Value step = b.create<NVVM::GridDimXOp>(loc, b.getI32Type());
    auto tiles = b.create<scf::ForOp>(loc, first, total, step,
                                      ValueRange{e.i32(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value count = tiles.getRegionIterArg(0);
    auto slot = b.create<StageOp>(loc, b.getI32Type(), b.getI32Type(), count,
                                  b.getI32IntegerAttr(1));
    b.create<ParkReduceOp>(loc, slot.getStage());
    b.create<scf::YieldOp>(loc, ValueRange{e.add(count, e.i32(1))});
  }

  /// The end of a tile in the math role: dgemm.epilogue, or with park = 1
  /// the sums parked for the workers. The park's slot and phase come from
  /// the number of tiles this CTA walked before this one, (t - first) /
  /// step, with the CTA index and grid size read afresh (keeping the tile
  /// loop's copies live past the block loop made ptxas spill).
  void emitEpilogue(Emitter &e, scf::ForOp tiles, ValueRange sums, Value g,
                    Value mb, Value nb) {
    if (!config.getPark()) {
      b.create<EpilogueOp>(loc, sums, g, mb, nb, Value());
      return;
    }
    Value count = e.div(
        e.sub(tiles.getInductionVar(),
              b.create<NVVM::BlockIdXOp>(loc, b.getI32Type())),
        b.create<NVVM::GridDimXOp>(loc, b.getI32Type()));
    auto slot = b.create<StageOp>(loc, b.getI32Type(), b.getI32Type(), count,
                                  b.getI32IntegerAttr(1));
    b.create<ParkStoreOp>(loc, sums, slot.getStage(), g, mb, nb);
  }

  void buildMath(KernelOp kernel) {
    Emitter e{b, loc};
    TileSchedule sched = TileSchedule::build(e, kernel, config);
    Value ks = kernel.getArg(KernelOp::PtrKs);
    // The block product can be computed as column slices (mma-slices), each
    // its own WGMMA commit group: dgemm-place-sync waits for each slice
    // alone, so the promotion of one slice runs while the tensor cores
    // compute the next. Measured slower than one group on the H200 (the
    // narrower WGMMAs re-read A from shared memory and the promotion's scale
    // loads queue behind them; bench/NOTES.md), hence the default of 1.
    SmallVector<int64_t> widths = sliceWidths(config.getBlockN(), mmaSlices);
    SmallVector<VectorType> accTypes;
    for (int64_t w : widths)
      accTypes.push_back(VectorType::get({w / 2}, b.getF32Type()));
    // A slice's scales are two sfa rows and width / 4 sfb columns per
    // thread. Holding them in registers next to the WGMMA fragments and the
    // FP32 sums (block_n registers) lets the stage be released before the
    // last promotion; beyond ~200 registers (of 232, the rest for
    // addressing) ptxas spills, so slices past the budget read their scales
    // during their promotion instead (the stage is then released after it).
    SmallVector<bool> early;
    int64_t regs = config.getBlockN() + 2;
    for (int64_t w : widths) {
      early.push_back(regs + w / 4 <= scaleBudget());
      if (early.back())
        regs += w / 4;
    }
    // A single slice whose scales do not all fit may hold those of its first
    // columns (scale-prefix-cols, a multiple of 8), read with the others'
    // before the WGMMAs; the rest are read during the promotion. Not with
    // three math warpgroups: in their 160 registers a 64-column prefix
    // spills.
    int64_t prefix = 0;
    if (widths.size() == 1 && !early.front() && scalePrefixCols > 0 &&
        config.getMathWarpgroups() <= 2)
      prefix = std::min<int64_t>(scalePrefixCols, widths.front() - 8);
    // With two or three math warpgroups on the same stage, they take turns
    // on the tensor cores, in a ring: one's WGMMAs run while the others
    // promote.
    // With the promotion overlapped each warpgroup keeps its own WGMMAs
    // queued on the tensor cores, so there are no turns.
    bool pipelined = overlaps(config, overlapPromotion, mmaSlices);
    bool alternate = alternateWarpgroups && config.getMathWarpgroups() >= 2 &&
                     !pipelined;
    // Two blocks per turn where the second set of fragments fits the
    // registers, and with two math warpgroups (the layout measured;
    // bench/NOTES.md).
    int64_t per = blocksPerTurn == 2 && secondFragmentFits(config) &&
                          config.getMathWarpgroups() == 2
                      ? 2
                      : 1;
    // defer-epilogue: a tile's epilogue runs in the next tile with K blocks,
    // after that tile's first WGMMAs are issued (they run meanwhile), or
    // after the last tile. Only in-place kernels with one block per turn:
    // their epilogue needs nothing of c, whose prefetch is then issued at
    // the tile's start.
    bool defer = deferEpilogue && per == 1 && !pipelined &&
                 config.getInPlaceOnly() != 0 && !config.getPark();
    SmallVector<Value> tileInit = {e.i32(0)};
    if (defer) {
      // The pending epilogue: its group, m-block, n-block and block count,
      // and its sums. 0 blocks (none yet) makes the epilogue a no-op, as for
      // a tile without K blocks in place.
      for (int i = 0; i < 4; ++i)
        tileInit.push_back(e.i32(0));
      for (VectorType t : accTypes)
        tileInit.push_back(b.create<arith::ConstantOp>(
            loc, DenseElementsAttr::get(t, b.getF32FloatAttr(0.0f))));
    }
    if (alternate)
      b.create<TurnOp>(loc, TurnAction::start, ValueRange{});
    auto tiles = b.create<scf::ForOp>(loc, sched.first, sched.total, sched.step,
                                      tileInit);
    if (alternate || defer) {
      OpBuilder::InsertionGuard after(b);
      b.setInsertionPointAfter(tiles);
      if (alternate)
        b.create<TurnOp>(loc, TurnAction::finish, ValueRange{});
      if (defer)
        b.create<EpilogueOp>(loc, tiles.getResults().drop_front(5),
                             tiles.getResult(1), tiles.getResult(2),
                             tiles.getResult(3), tiles.getResult(4));
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value it = tiles.getRegionIterArg(0);
    auto [g, mb, nb] = sched.decompose(e, tiles.getInductionVar());
    if (prefetchNextC) {
      Value next = e.add(tiles.getInductionVar(), sched.step);
      auto [ng, nmb, nnb] = sched.decompose(e, next);
      Value valid = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                            next, sched.total);
      b.create<PrefetchCOp>(loc, ng, nmb, nnb, valid);
    }
    Value numKBlocks = e.div(e.loadK(ks, g), e.i32(128));
    if (pipelined) {
      buildPipelinedBlocks(e, tiles, it, numKBlocks, accTypes.front(), g, mb,
                           nb);
      return;
    }
    auto zerosOf = [&](VectorType t) -> Value {
      return b.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(t, b.getF32FloatAttr(0.0f)));
    };
    SmallVector<Value> init = {it};
    for (VectorType t : accTypes)
      init.push_back(zerosOf(t));
    SmallVector<int64_t> offsets;
    int64_t offset = 0;
    for (int64_t w : widths) {
      offsets.push_back(offset);
      offset += w;
    }
    // `per` consecutive blocks from iteration `kit`, added to `sums`. Their
    // WGMMAs are all issued in one turn, each block its own commit group, so
    // the promotion of one block runs while the tensor cores work on the
    // next. `afterIssue`, if set, is emitted right after the WGMMAs are
    // issued. Returns the next iteration and the sums.
    auto emitBody = [&](Value kit, SmallVector<Value> sums, int64_t per,
                        function_ref<void()> afterIssue) {
      SmallVector<Value> stages;
      for (int64_t j = 0; j < per; ++j)
        stages.push_back(stageOf(e, j == 0 ? kit : e.add(kit, e.i32(j)),
                                 nullptr));
      // Scales held in registers are read before the WGMMAs are issued (by
      // default): issued after them, the loads queue behind the WGMMAs'
      // shared-memory operand reads and the promotion waits for them. With
      // several blocks per turn there is no room for them.
      SmallVector<bool> held(early.begin(), early.end());
      if (per != 1)
        held.assign(held.size(), false);
      SmallVector<Value> scales(widths.size());
      int64_t part = per == 1 ? prefix : 0;
      auto loadScales = [&] {
        for (auto [i, w] : llvm::enumerate(widths))
          if (held[i] || part)
            scales[i] = b.create<LoadScalesOp>(
                loc, VectorType::get({2 + (held[i] ? w : part) / 4},
                                     b.getF32Type()),
                stages[0], offsets[i]);
      };
      if (scalesBeforeMma)
        loadScales();
      if (alternate)
        b.create<TurnOp>(loc, TurnAction::wait, ValueRange{});
      SmallVector<SmallVector<Value>> accs(per);
      for (int64_t j = 0; j < per; ++j)
        for (auto [i, t] : llvm::enumerate(accTypes))
          accs[j].push_back(b.create<MmaOp>(loc, t, stages[j], offsets[i]));
      // The turn is handed over once the first block's WGMMAs completed:
      // the other warpgroup's then queue behind this one's later blocks.
      // Three math warpgroups hand it over right after issuing: each
      // promotion then has the other two warpgroups' WGMMAs to hide behind
      // (2-5% faster than after completion on the H200, bench/NOTES.md).
      // So does a block with work after its issue (the deferred epilogue),
      // before that work, so that the other warpgroup's WGMMAs run during it.
      bool passEarly = passAfterIssue || config.getMathWarpgroups() > 2;
      if (alternate && afterIssue)
        b.create<TurnOp>(loc, TurnAction::pass, ValueRange{});
      if (afterIssue)
        afterIssue();
      if (!scalesBeforeMma)
        loadScales();
      if (alternate && !afterIssue)
        b.create<TurnOp>(loc, TurnAction::pass,
                         passEarly ? ValueRange{} : ValueRange(accs[0]));
      // reload-sfa-after-turn: a slice whose scales are all held takes its
      // two sfa values from a read of the stage after the hand-over.
      if (alternate && reloadSfaAfterTurn && per == 1)
        for (size_t i = 0; i < widths.size(); ++i) {
          if (!held[i] || !scales[i])
            continue;
          Value fresh = b.create<LoadScalesOp>(
              loc, VectorType::get({4}, b.getF32Type()), stages[0],
              offsets[i]);
          for (int64_t k = 0; k < 2; ++k) {
            Value idx = b.create<LLVM::ConstantOp>(loc, b.getI32Type(), k);
            Value v = b.create<LLVM::ExtractElementOp>(loc, fresh, idx);
            scales[i] =
                b.create<LLVM::InsertElementOp>(loc, scales[i], v, idx);
          }
        }
      Value next = e.add(kit, e.i32(per));
      for (int64_t j = 0; j < per; ++j)
        for (auto [i, acc] : llvm::enumerate(accs[j]))
          sums[i] = b.create<PromoteOp>(loc, acc.getType(), sums[i], acc,
                                        scales[i],
                                        held[i] ? Value() : stages[j],
                                        offsets[i]);
      return std::make_pair(next, sums);
    };
    // One loop iteration: `per` consecutive blocks.
    auto emitBlocks = [&](scf::ForOp loop, int64_t per) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(loop.getBody());
      auto [next, sums] =
          emitBody(loop.getRegionIterArg(0),
                   SmallVector<Value>(loop.getRegionIterArgs().drop_front()),
                   per, nullptr);
      SmallVector<Value> yields = {next};
      yields.append(sums.begin(), sums.end());
      b.create<scf::YieldOp>(loc, yields);
    };
    if (defer) {
      buildDeferredTile(e, tiles, numKBlocks, init, g, mb, nb, emitBody,
                        emitBlocks);
      return;
    }
    // The tile's block loops from `init`; their results.
    auto emitLoops = [&](ValueRange init) -> ValueRange {
      scf::ForOp kloop;
      if (per == 1) {
        kloop =
            b.create<scf::ForOp>(loc, e.i32(0), numKBlocks, e.i32(1), init);
        markBlockLoop(kloop, 1, 0);
        emitBlocks(kloop, 1);
      } else {
        // Pairs of blocks, then the odd block if there is one.
        Value pairs = e.div(numKBlocks, e.i32(2));
        auto pairLoop =
            b.create<scf::ForOp>(loc, e.i32(0), pairs, e.i32(1), init);
        markBlockLoop(pairLoop, 2, 0);
        emitBlocks(pairLoop, 2);
        // The induction variable of the loop over the odd block is the
        // block.
        kloop = b.create<scf::ForOp>(loc, e.mul(pairs, e.i32(2)), numKBlocks,
                                     e.i32(1), pairLoop.getResults());
        markBlockLoop(kloop, 1, 0);
        emitBlocks(kloop, 1);
      }
      return kloop.getResults();
    };
    // narrow-tail-mma: a tile with at most 64 or 128 columns inside N (the
    // last n-block when block_n does not divide N) runs block loops whose
    // WGMMAs and promotions cover only that many columns: dgemm.mma and
    // dgemm.promote of a slice [0, w) of the tile, its sums the first w / 2
    // of the tile's. The other sums stay 0 (their columns lie past N, where
    // the full-width product was 0 as well: TMA fills B's rows past N with
    // zeros), so the result is the same. The width is chosen per tile; the
    // block loops of each width are their own code, so no WGMMA fragment in
    // flight ever meets another branch's.
    SmallVector<int64_t> narrow;
    if (narrowTailMma && widths.size() == 1)
      for (int64_t w : {64, 128})
        if (w < config.getBlockN())
          narrow.push_back(w);
    if (narrow.empty()) {
      ValueRange done = emitLoops(init);
      emitEpilogue(e, tiles, done.drop_front(), g, mb, nb);
      b.create<scf::YieldOp>(loc, ValueRange{done.front()});
      return;
    }
    Value live = b.create<arith::SubIOp>(
        loc, kernel.getArg(KernelOp::DimN),
        e.mul(nb, e.i32(config.getBlockN())));
    VectorType fullType = accTypes.front();
    int64_t fullWidth = widths.front();
    bool fullEarly = early.front();
    int64_t fullPrefix = prefix;
    std::function<SmallVector<Value>(size_t)> choose =
        [&](size_t i) -> SmallVector<Value> {
      if (i == narrow.size()) {
        widths = {fullWidth};
        accTypes = {fullType};
        early = {fullEarly};
        prefix = fullPrefix;
        return SmallVector<Value>(emitLoops(init));
      }
      int64_t w = narrow[i];
      auto branch = b.create<scf::IfOp>(
          loc, TypeRange{init[0].getType(), fullType},
          e.cmp(arith::CmpIPredicate::sle, live, e.i32(w)), true, true);
      // convert-dgemm-to-nvvm finds the tile's block count through the
      // full-width branch (the last else region).
      branch->setAttr("dgemm.narrow_tail", b.getUnitAttr());
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      // The narrow loops' registers: a fragment and scales of w columns
      // next to the tile's sums.
      VectorType type = VectorType::get({w / 2}, b.getF32Type());
      widths = {w};
      accTypes = {type};
      early = {fullWidth / 2 + w / 2 + 2 + w / 4 <= scaleBudget()};
      prefix = early.front() ? 0 : std::min<int64_t>(fullPrefix, w - 8);
      ValueRange done = emitLoops({init[0], zerosOf(type)});
      // The tile's sums: the narrow ones, then zeros.
      Value sums = zerosOf(fullType);
      for (int64_t r = 0; r < w / 2; ++r) {
        Value idx = e.i32(r);
        sums = b.create<LLVM::InsertElementOp>(
            loc, sums,
            b.create<LLVM::ExtractElementOp>(loc, done[1], idx), idx);
      }
      b.create<scf::YieldOp>(loc, ValueRange{done[0], sums});
      b.setInsertionPointToStart(&branch.getElseRegion().front());
      b.create<scf::YieldOp>(loc, choose(i + 1));
      return SmallVector<Value>(branch.getResults());
    };
    SmallVector<Value> done = choose(0);
    emitEpilogue(e, tiles, ArrayRef<Value>(done).drop_front(), g, mb, nb);
    b.create<scf::YieldOp>(loc, ValueRange{done.front()});
  }

  /// One tile of a kernel with deferred epilogues (defer-epilogue):
  ///
  ///   prefetch c if the tile has 1 to 8 blocks
  ///   if (blocks > 0) {
  ///     f = mma(block 0)
  ///     epilogue(pending sums, pending tile)   // a no-op for 0 blocks
  ///     sum = promote(0, f)
  ///     for blocks 1 .. blocks - 1: as without deferral
  ///     pending = (sum, this tile)
  ///   }
  ///
  /// The previous tile's epilogue runs while this tile's first WGMMAs do, so
  /// the pending sums are dead before the block loop and the registers stay
  /// those of one tile. A tile without blocks leaves the pending epilogue
  /// to the next one (in place, d already holds its c). buildMath adds the
  /// last tile's epilogue after the tile loop.
  template <typename Body, typename Blocks>
  void buildDeferredTile(Emitter &e, scf::ForOp tiles, Value numKBlocks,
                         ArrayRef<Value> init, Value g, Value mb, Value nb,
                         Body &emitBody, Blocks &emitBlocks) {
    auto args = tiles.getRegionIterArgs();
    Value it = args[0];
    SmallVector<Value> pendingSums(args.drop_front(5));
    // The c of short tiles is prefetched at the tile's start, as the
    // in-place kernel does without deferral (convert-dgemm-to-nvvm).
    Value shortTile = e.cmp(
        arith::CmpIPredicate::ult, e.sub(numKBlocks, e.i32(1)),
        e.i32(::dgemm::heuristics::kRedEpilogueTileBlocks));
    b.create<PrefetchCOp>(loc, g, mb, nb, shortTile);
    SmallVector<Type> types;
    for (Value v : args)
      types.push_back(v.getType());
    auto any = b.create<scf::IfOp>(
        loc, types, e.cmp(arith::CmpIPredicate::sgt, numKBlocks, e.i32(0)),
        true, true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&any.getThenRegion().front());
      auto [next, sums] = emitBody(
          it, SmallVector<Value>(init.drop_front()), 1, [&] {
            // No region around it (dgemm-place-sync would complete the
            // WGMMAs in flight inside one): with 0 blocks it does nothing.
            b.create<EpilogueOp>(loc, pendingSums, args[1], args[2], args[3],
                                 args[4]);
          });
      SmallVector<Value> loopInit = {next};
      loopInit.append(sums.begin(), sums.end());
      auto kloop =
          b.create<scf::ForOp>(loc, e.i32(1), numKBlocks, e.i32(1), loopInit);
      // Iteration i issues block i; block 0 is issued before the loop.
      markBlockLoop(kloop, 1, 0);
      emitBlocks(kloop, 1);
      SmallVector<Value> yields = {kloop.getResult(0), g, mb, nb, numKBlocks};
      yields.append(kloop.getResults().drop_front().begin(),
                    kloop.getResults().drop_front().end());
      b.create<scf::YieldOp>(loc, yields);
      b.setInsertionPointToStart(&any.getElseRegion().front());
      b.create<scf::YieldOp>(loc, SmallVector<Value>(args.begin(), args.end()));
    }
    b.create<scf::YieldOp>(loc, any.getResults());
  }

  /// The block loop of one tile with each block's promotion overlapped with
  /// the next block's WGMMAs, across loop iterations:
  ///
  ///   if (blocks > 0) {
  ///     f = mma(block 0)
  ///     for each pair p (blocks 2p + 1, 2p + 2), carrying f and its stage:
  ///       f1 = mma(2p + 1); sum = promote(f);  f = mma(2p + 2); sum = promote(f1)
  ///     if (blocks even) { f1 = mma(last); sum = promote(f); sum = promote(f1) }
  ///     else             { sum = promote(f) }
  ///   }
  ///
  /// The fragment issued last in an iteration is still being written by its
  /// WGMMAs when the iteration ends: it and its stage are loop-carried, and
  /// dgemm-place-sync places the waits and the stage's release in the next
  /// iteration (or after the loop). The loop body names the two fragments
  /// apart, so each keeps its registers while its WGMMAs run.
  void buildPipelinedBlocks(Emitter &e, scf::ForOp tiles, Value it,
                            Value numKBlocks, VectorType accType, Value g,
                            Value mb, Value nb) {
    Value zeros = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
    Type i32 = b.getI32Type();
    // A block's scales are read into registers before the next block's
    // WGMMAs are issued when they fit next to the sum and both fragments:
    // read during the promotion, they queue behind those WGMMAs' operand
    // reads of shared memory.
    int64_t width = 2 * accType.getNumElements();
    bool hold = 3 * width / 2 + 2 + width / 4 <= scaleBudget();
    auto scalesOf = [&](Value stage) -> Value {
      if (!hold)
        return Value();
      return b.create<LoadScalesOp>(
          loc, VectorType::get({2 + width / 4}, b.getF32Type()), stage, 0);
    };
    auto promote = [&](Value sum, Value acc, Value stage, Value scales) {
      return b
          .create<PromoteOp>(loc, accType, sum, acc, scales,
                             scales ? Value() : stage, 0)
          .getResult();
    };
    auto any = b.create<scf::IfOp>(
        loc, TypeRange{i32, accType},
        e.cmp(arith::CmpIPredicate::sgt, numKBlocks, e.i32(0)), true, true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&any.getThenRegion().front());
      Value s0 = stageOf(e, it, nullptr);
      Value f0 = b.create<MmaOp>(loc, accType, s0, 0);
      Value pairs = e.div(e.sub(numKBlocks, e.i32(1)), e.i32(2));
      auto loop = b.create<scf::ForOp>(loc, e.i32(0), pairs, e.i32(1),
                                       ValueRange{it, zeros, f0, s0});
      // Iteration i issues blocks 2i + 1 and 2i + 2; block 0 is issued
      // before the loop.
      markBlockLoop(loop, 2, 1);
      {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(loop.getBody());
        Value kit = loop.getRegionIterArg(0), sum = loop.getRegionIterArg(1);
        Value f = loop.getRegionIterArg(2), s = loop.getRegionIterArg(3);
        Value s1 = stageOf(e, e.add(kit, e.i32(1)), nullptr);
        Value sc = scalesOf(s);
        Value f1 = b.create<MmaOp>(loc, accType, s1, 0);
        sum = promote(sum, f, s, sc);
        Value s2 = stageOf(e, e.add(kit, e.i32(2)), nullptr);
        Value sc1 = scalesOf(s1);
        Value f2 = b.create<MmaOp>(loc, accType, s2, 0);
        sum = promote(sum, f1, s1, sc1);
        b.create<scf::YieldOp>(
            loc, ValueRange{e.add(kit, e.i32(2)), sum, f2, s2});
      }
      Value kit = loop.getResult(0), f = loop.getResult(2),
            s = loop.getResult(3);
      Value even = e.cmp(arith::CmpIPredicate::eq,
                         e.rem(numKBlocks, e.i32(2)), e.i32(0));
      auto tail = b.create<scf::IfOp>(loc, TypeRange{accType}, even, true,
                                      true);
      {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(&tail.getThenRegion().front());
        Value s1 = stageOf(e, e.add(kit, e.i32(1)), nullptr);
        Value sc = scalesOf(s);
        Value f1 = b.create<MmaOp>(loc, accType, s1, 0);
        Value sum = promote(loop.getResult(1), f, s, sc);
        sum = promote(sum, f1, s1, scalesOf(s1));
        b.create<scf::YieldOp>(loc, sum);
        b.setInsertionPointToStart(&tail.getElseRegion().front());
        b.create<scf::YieldOp>(
            loc, promote(loop.getResult(1), f, s, scalesOf(s)));
      }
      b.create<scf::YieldOp>(
          loc, ValueRange{e.add(it, numKBlocks), tail.getResult(0)});
      b.setInsertionPointToStart(&any.getElseRegion().front());
      b.create<scf::YieldOp>(loc, ValueRange{it, zeros});
    }
    emitEpilogue(e, tiles, ValueRange{any.getResult(1)}, g, mb, nb);
    b.create<scf::YieldOp>(loc, ValueRange{any.getResult(0)});
  }

  GemmOp gemm;
  OpBuilder &b;
  Location loc;
  ConfigAttr config;
  int64_t scaleRegisterBudget;
  int64_t mmaSlices;
  bool scalesBeforeMma;
  bool alternateWarpgroups;
  bool passAfterIssue;
  bool prefetchNextC;
  int64_t blocksPerTurn;
  bool overlapPromotion;
  int64_t scalePrefixCols;
  bool deferEpilogue;
  bool reloadSfaAfterTurn;
  bool narrowTailMma;
};

struct LowerToKernelPass
    : public mlir::dgemm::impl::DGemmLowerToKernelBase<LowerToKernelPass> {
  using Base::Base;
  void runOnOperation() override {
    if (scalePrefixCols < 0 || scalePrefixCols % 8 != 0) {
      getOperation().emitError("dgemm-lower-to-kernel: scale-prefix-cols must "
                               "be a non-negative multiple of 8, got ")
          << static_cast<int64_t>(scalePrefixCols);
      return signalPassFailure();
    }
    if (blocksPerTurn != 1 && blocksPerTurn != 2) {
      getOperation().emitError("dgemm-lower-to-kernel: blocks-per-turn must "
                               "be 1 or 2, got ")
          << static_cast<int64_t>(blocksPerTurn);
      return signalPassFailure();
    }
    SmallVector<GemmOp> gemms;
    getOperation().walk([&](GemmOp op) { gemms.push_back(op); });
    llvm::StringSet<> built;
    for (GemmOp gemm : gemms) {
      if (gemm.getKind() != GemmKind::k_grouped_contiguous) {
        gemm.emitOpError("lowering of kind '")
            << stringifyGemmKind(gemm.getKind())
            << "' is not yet supported (only k_grouped_contiguous is)";
        return signalPassFailure();
      }
      if (!gemm.getConfig()) {
        gemm.emitOpError("has no 'config': run dgemm-select-config first");
        return signalPassFailure();
      }
      if (gemm.getConfig()->getClusterN() != 1) {
        gemm.emitOpError("multicast of A (cluster_n = 2) is not lowered; "
                         "use cluster_n = 1 (cluster_m = 2 multicasts B)");
        return signalPassFailure();
      }
      // The kernel depends only on the configuration (M, N, G and every K
      // are launch arguments), so descriptions sharing one share the kernel.
      OpBuilder builder(gemm);
      if (built.insert(gemm.getConfig()->getEntryName()).second) {
        KernelBuilder(gemm, builder, scaleRegisterBudget, mmaSlices,
                      scalesBeforeMma, alternateWarpgroups, passAfterIssue,
                      prefetchNextC, blocksPerTurn,
                      overlapPromotion, scalePrefixCols, deferEpilogue,
                      reloadSfaAfterTurn, narrowTailMma)
            .build();
        ++numKernels;
      }
      gemm.erase();
    }
  }
};
} // namespace
