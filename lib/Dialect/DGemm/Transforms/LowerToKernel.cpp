//===- LowerToKernel.cpp - Build the warp-specialized kernel --------------===//
//
// Turns a configured k_grouped_contiguous dgemm.gemm into a dgemm.kernel. The
// kernel declares what each asynchronous operation reads and writes and holds
// no synchronization at all: dgemm-place-sync adds it.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilding.h"

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
using namespace mlir::dgemm::kernel_building;

namespace {

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
    auto [kernel, ws] = createKernel(b, loc, config);
    OpBuilder::InsertionGuard guard(b);
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
    TileSchedule sched = TileSchedule::build(e, kernel, config, kernel.getArg(KernelOp::NumGroups));
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
    TileSchedule sched = TileSchedule::build(e, kernel, config, kernel.getArg(KernelOp::NumGroups));
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
        accs.push_back(b.create<MmaOp>(loc, accType, stages[j], Value(), 0));
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
                                  held ? Value() : stages[j],
                                  /*block_scale=*/Value(), 0);
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

} // namespace

std::pair<KernelOp, WarpSpecializeOp>
kernel_building::createKernel(OpBuilder &b, Location loc, ConfigAttr config) {
  MLIRContext *ctx = b.getContext();
  auto kernel = b.create<KernelOp>(loc, config.getEntryName(), config);
  Block *entry = new Block();
  kernel.getBody().push_back(entry);
  auto genericPtr = LLVM::LLVMPointerType::get(ctx);
  auto globalPtr = LLVM::LLVMPointerType::get(ctx, 1);
  for (int i = 0; i < KernelOp::NumArgs; ++i) {
    Type t = i < KernelOp::PtrA         ? Type(genericPtr)
             : KernelOp::isPointerArg(i) ? Type(globalPtr)
                                         : Type(b.getI32Type());
    entry->addArgument(t, loc);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  // Producer: one thread, few registers; math: the rest of the 64K file.
  auto ws = b.create<WarpSpecializeOp>(
      loc, b.getI32IntegerAttr(producerRegisters(config)),
      b.getI32IntegerAttr(mathRegisters(config)), IntegerAttr(), IntegerAttr(),
      IntegerAttr(), IntegerAttr(), IntegerAttr());
  ws.getProducer().push_back(new Block());
  ws.getMath().push_back(new Block());
  return {kernel, ws};
}

namespace {
struct LowerToKernelPass
    : public mlir::dgemm::impl::DGemmLowerToKernelBase<LowerToKernelPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<GemmOp> gemms;
    getOperation().walk([&](GemmOp op) { gemms.push_back(op); });
    llvm::StringSet<> built;
    for (GemmOp gemm : gemms) {
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
        switch (gemm.getConfig()->getKind()) {
        case GemmKind::k_grouped_contiguous:
          // The BF16 weight gradient shares the 1D2D kernels' builder: one
          // tensor map over all of K, so no descriptor is rewritten.
          if (gemm.getConfig()->isBf16())
            buildMGroupedKernel(gemm, builder);
          else
            KernelBuilder(gemm, builder).build();
          break;
        case GemmKind::m_grouped_contiguous:
        case GemmKind::m_grouped_contiguous_psum:
        case GemmKind::m_grouped_masked:
        case GemmKind::normal:
          // One 1D2D kernel, its row mapping chosen by kind.
          buildMGroupedKernel(gemm, builder);
          break;
        }
        ++numKernels;
      }
      gemm.erase();
    }
  }
};
} // namespace
