//===- MGroupedKernel.cpp - The m-grouped contiguous FP8 kernel -----------===//
//
// The MoE forward / data-gradient GEMM: D[M_sum, N] (BF16) = A[M_sum, K]
// B[g]^T over tiles of rows that all belong to expert g, the grouped
// layout's entry of the tile's first row (-1: a padding tile, which loads
// and writes nothing). A and B are loaded through the kernel-parameter
// tensor maps (B's rows of expert g start at row g * N), sfa through the
// stages, and the 128x128 B scales from global memory by the math threads
// (dgemm.load_block_scale). Like the k-grouped kernel, the result declares
// what each operation touches and holds no synchronization.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilding.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::kernel_building;

namespace {

class MGroupedKernelBuilder {
public:
  MGroupedKernelBuilder(GemmOp gemm, OpBuilder &builder)
      : b(builder), loc(gemm.getLoc()), config(*gemm.getConfig()) {}

  void build() {
    auto [kernel, ws] = createKernel(b, loc, config);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ws.getProducer().front());
    buildProducer(kernel);
    b.setInsertionPointToStart(&ws.getMath().front());
    buildMath(kernel);
  }

private:
  /// A tile of the schedule: its expert (negative for padding rows), its
  /// m- and n-block and its number of 128-deep K blocks (0 for padding).
  struct Tile {
    Value group, mBlock, nBlock, numKBlocks;
  };

  /// The schedule walks the M_sum x N tiles as one group; each tile's
  /// expert is the grouped layout's entry of its first row, which both roles
  /// read, so they agree on which tiles have K blocks.
  TileSchedule schedule(Emitter &e, KernelOp kernel) {
    return TileSchedule::build(e, kernel, config, e.i32(1));
  }

  Tile tileOf(Emitter &e, KernelOp kernel, const TileSchedule &sched,
              Value t) {
    auto [unused, mb, nb] = sched.decompose(e, t);
    (void)unused;
    Value firstRow = e.mul(mb, e.i32(config.getBlockM()));
    Value entry = e.loadK(kernel.getArg(KernelOp::PtrKs), firstRow);
    // An expert outside [0, G) is padding: nothing is read (B and sfb
    // would be read out of bounds) or written.
    Value valid = b.create<arith::AndIOp>(
        loc, e.cmp(arith::CmpIPredicate::sge, entry, e.i32(0)),
        e.cmp(arith::CmpIPredicate::slt, entry,
              kernel.getArg(KernelOp::NumGroups)));
    Value group = b.create<arith::SelectOp>(loc, valid, entry, e.i32(-1));
    Value kBlocks = e.ceilDiv(kernel.getArg(KernelOp::DimK), 128);
    Value numKBlocks = b.create<arith::SelectOp>(loc, valid, kBlocks, e.i32(0));
    return {group, mb, nb, numKBlocks};
  }

  Value stageOf(Value it) {
    auto st = b.create<StageOp>(loc, b.getI32Type(), b.getI32Type(), it,
                                b.getI32IntegerAttr(config.getStages()));
    return st.getStage();
  }

  void buildProducer(KernelOp kernel) {
    Emitter e{b, loc};
    TileSchedule sched = schedule(e, kernel);
    auto tiles = b.create<scf::ForOp>(loc, sched.first, sched.total, sched.step,
                                      ValueRange{e.i32(0)});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    Tile tile = tileOf(e, kernel, sched, tiles.getInductionVar());
    Value m0 = e.mul(tile.mBlock, e.i32(config.getBlockM()));
    // Expert g's B is rows [g * N, (g + 1) * N) of the [G * N, K] map.
    Value bRow = e.add(e.mul(tile.group, kernel.getArg(KernelOp::DimN)),
                       e.mul(tile.nBlock, e.i32(config.getBlockN())));
    auto kloop = b.create<scf::ForOp>(loc, e.i32(0), tile.numKBlocks, e.i32(1),
                                      ValueRange{tiles.getRegionIterArg(0)});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(kloop.getBody());
      Value kb = kloop.getInductionVar();
      Value kit = kloop.getRegionIterArg(0);
      Value stage = stageOf(kit);
      Value kx = e.mul(kb, e.i32(128));
      b.create<TmaLoadOp>(loc, TmaOperand::a, stage, kx, m0, Value(),
                          /*multicast=*/false);
      b.create<TmaLoadOp>(loc, TmaOperand::b, stage, kx, bRow, Value(),
                          /*multicast=*/false);
      b.create<TmaLoadOp>(loc, TmaOperand::sfa, stage, m0, kb, Value(),
                          /*multicast=*/false);
      b.create<scf::YieldOp>(loc, ValueRange{e.add(kit, e.i32(1))});
    }
    b.create<scf::YieldOp>(loc, ValueRange{kloop.getResult(0)});
  }

  void buildMath(KernelOp kernel) {
    Emitter e{b, loc};
    TileSchedule sched = schedule(e, kernel);
    int64_t width = config.getBlockN();
    VectorType accType = VectorType::get({width / 2}, b.getF32Type());
    VectorType sfaType = VectorType::get({2}, b.getF32Type());
    // Two math warpgroups take turns on the tensor cores (as in the
    // k-grouped kernel): one's WGMMAs run while the other promotes.
    bool alternate = config.getMathWarpgroups() >= 2;
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
    Tile tile = tileOf(e, kernel, sched, tiles.getInductionVar());
    Value zeros = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
    auto kloop = b.create<scf::ForOp>(
        loc, e.i32(0), tile.numKBlocks, e.i32(1),
        ValueRange{tiles.getRegionIterArg(0), zeros});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(kloop.getBody());
      Value kb = kloop.getInductionVar();
      Value kit = kloop.getRegionIterArg(0);
      Value sum = kloop.getRegionIterArg(1);
      Value stage = stageOf(kit);
      // The scales are read before the WGMMAs are issued, so that their
      // loads do not queue behind the WGMMAs' operand reads.
      Value sfa = b.create<LoadScalesOp>(loc, sfaType, stage, 0);
      Value sfb = b.create<LoadBlockScaleOp>(loc, b.getF32Type(), tile.group,
                                             tile.nBlock, kb);
      if (alternate)
        b.create<TurnOp>(loc, TurnAction::wait, ValueRange{});
      Value acc = b.create<MmaOp>(loc, accType, stage, 0);
      if (alternate)
        b.create<TurnOp>(loc, TurnAction::pass, ValueRange{acc});
      sum = b.create<PromoteOp>(loc, accType, sum, acc, sfa, Value(), sfb, 0);
      b.create<scf::YieldOp>(loc, ValueRange{e.add(kit, e.i32(1)), sum});
    }
    b.create<StoreRowsOp>(loc, ValueRange{kloop.getResult(1)}, tile.group,
                          tile.mBlock, tile.nBlock);
    b.create<scf::YieldOp>(loc, ValueRange{kloop.getResult(0)});
  }

  OpBuilder &b;
  Location loc;
  ConfigAttr config;
};

} // namespace

void kernel_building::buildMGroupedKernel(GemmOp gemm, OpBuilder &b) {
  MGroupedKernelBuilder(gemm, b).build();
}
