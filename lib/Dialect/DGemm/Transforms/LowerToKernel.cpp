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
  KernelBuilder(GemmOp gemm, OpBuilder &builder)
      : gemm(gemm), b(builder), loc(gemm.getLoc()), config(*gemm.getConfig()) {}

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

  /// Registers a slice's scales may take next to the WGMMA fragment and the
  /// FP32 sums with two math warpgroups (232 registers); fewer registers
  /// lower it by as many. Past it ptxas spilled (bench/NOTES.md).
  static constexpr int64_t kScaleRegisterBudget = 202;
  int64_t scaleBudget() const {
    return kScaleRegisterBudget - (232 - mathRegisters(config));
  }

  /// Records on a block loop which blocks its iteration i issues: `per`
  /// blocks from per * i + `first` (convert-dgemm-to-nvvm places the c
  /// prefetch by it).
  void markBlockLoop(scf::ForOp loop, int64_t per, int64_t first) {
    loop->setAttr("dgemm.first_block", b.getI64ArrayAttr({per, first}));
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
    if (config.isParked()) {
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
    if (!config.isParked()) {
      b.create<EpilogueOp>(loc, sums, g, mb, nb);
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
    int64_t width = config.getBlockN();
    VectorType accType = VectorType::get({width / 2}, b.getF32Type());
    // A block's scales are two sfa rows and block_n / 4 sfb columns per
    // thread. Holding them in registers next to the WGMMA fragment and the
    // FP32 sums (block_n registers) lets the stage be released before the
    // promotion; beyond the budget ptxas spills, so wider tiles read their
    // scales during the promotion instead (the stage is then released after
    // it).
    bool early = width + 2 + width / 4 <= scaleBudget();
    // With two or three math warpgroups on the same stage, they take turns
    // on the tensor cores, in a ring: one's WGMMAs run while the others
    // promote.
    bool alternate = config.getMathWarpgroups() >= 2;
    // Two blocks per turn where the second set of fragments fits the
    // registers, and with two math warpgroups (the layout measured;
    // bench/NOTES.md).
    int64_t per =
        secondFragmentFits(config) && config.getMathWarpgroups() == 2 ? 2 : 1;
    if (alternate)
      b.create<TurnOp>(loc, TurnAction::start, ValueRange{});
    auto tiles = b.create<scf::ForOp>(loc, sched.first, sched.total, sched.step,
                                      ValueRange{e.i32(0)});
    if (alternate) {
      OpBuilder::InsertionGuard after(b);
      b.setInsertionPointAfter(tiles);
      b.create<TurnOp>(loc, TurnAction::finish, ValueRange{});
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Value it = tiles.getRegionIterArg(0);
    auto [g, mb, nb] = sched.decompose(e, tiles.getInductionVar());
    Value numKBlocks = e.div(e.loadK(ks, g), e.i32(128));
    Value zeros = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
    // `per` consecutive blocks from iteration `kit`, added to `sum`. Their
    // WGMMAs are all issued in one turn, each block its own commit group, so
    // the promotion of one block runs while the tensor cores work on the
    // next. Returns the next iteration and the sum.
    auto emitBody = [&](Value kit, Value sum, int64_t per) {
      SmallVector<Value> stages;
      for (int64_t j = 0; j < per; ++j)
        stages.push_back(stageOf(e, j == 0 ? kit : e.add(kit, e.i32(j)),
                                 nullptr));
      // Scales held in registers are read before the WGMMAs are issued:
      // issued after them, the loads queue behind the WGMMAs' shared-memory
      // operand reads and the promotion waits for them. With several blocks
      // per turn there is no room for them.
      bool held = early && per == 1;
      Value scales;
      if (held)
        scales = b.create<LoadScalesOp>(
            loc, VectorType::get({2 + width / 4}, b.getF32Type()), stages[0],
            0);
      if (alternate)
        b.create<TurnOp>(loc, TurnAction::wait, ValueRange{});
      SmallVector<Value> accs;
      for (int64_t j = 0; j < per; ++j)
        accs.push_back(b.create<MmaOp>(loc, accType, stages[j], 0));
      // The turn is handed over once the first block's WGMMAs completed:
      // the other warpgroup's then queue behind this one's later blocks.
      // Three math warpgroups hand it over right after issuing: each
      // promotion then has the other two warpgroups' WGMMAs to hide behind
      // (2-5% faster than after completion on the H200, bench/NOTES.md).
      if (alternate)
        b.create<TurnOp>(loc, TurnAction::pass,
                         config.getMathWarpgroups() > 2 ? ValueRange{}
                                                        : ValueRange(accs[0]));
      Value next = e.add(kit, e.i32(per));
      for (int64_t j = 0; j < per; ++j)
        sum = b.create<PromoteOp>(loc, accType, sum, accs[j], scales,
                                  held ? Value() : stages[j], 0);
      return std::make_pair(next, sum);
    };
    // One loop iteration: `per` consecutive blocks.
    auto emitBlocks = [&](scf::ForOp loop, int64_t per) {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(loop.getBody());
      auto [next, sum] = emitBody(loop.getRegionIterArg(0),
                                  loop.getRegionIterArg(1), per);
      b.create<scf::YieldOp>(loc, ValueRange{next, sum});
    };
    SmallVector<Value, 2> init = {it, zeros};
    scf::ForOp kloop;
    if (per == 1) {
      kloop = b.create<scf::ForOp>(loc, e.i32(0), numKBlocks, e.i32(1), init);
      markBlockLoop(kloop, 1, 0);
      emitBlocks(kloop, 1);
    } else {
      // Pairs of blocks, then the odd block if there is one.
      Value pairs = e.div(numKBlocks, e.i32(2));
      auto pairLoop =
          b.create<scf::ForOp>(loc, e.i32(0), pairs, e.i32(1), init);
      markBlockLoop(pairLoop, 2, 0);
      emitBlocks(pairLoop, 2);
      // The induction variable of the loop over the odd block is the block.
      kloop = b.create<scf::ForOp>(loc, e.mul(pairs, e.i32(2)), numKBlocks,
                                   e.i32(1), pairLoop.getResults());
      markBlockLoop(kloop, 1, 0);
      emitBlocks(kloop, 1);
    }
    emitEpilogue(e, tiles, kloop.getResults().drop_front(), g, mb, nb);
    b.create<scf::YieldOp>(loc, ValueRange{kloop.getResult(0)});
  }

  GemmOp gemm;
  OpBuilder &b;
  Location loc;
  ConfigAttr config;
};

struct LowerToKernelPass
    : public mlir::dgemm::impl::DGemmLowerToKernelBase<LowerToKernelPass> {
  using Base::Base;
  void runOnOperation() override {
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
        KernelBuilder(gemm, builder).build();
        ++numKernels;
      }
      gemm.erase();
    }
  }
};
} // namespace
