//===- MGroupedKernel.cpp - The FP8 1D2D kernels (BF16 d) -----------------===//
//
// D (BF16) = A B^T with 1x128 A scales and 128x128 B scales, for the three
// kinds that share this kernel and differ only in how a tile's rows map to a
// group (RowMap below):
//   - m_grouped_contiguous (the MoE forward / data gradient): A [M_sum, K],
//     a tile's expert the grouped layout's entry of its first row (-1: a
//     padding tile, which loads and writes nothing);
//   - m_grouped_contiguous_psum: A [M_sum, K], expert g's rows [align(
//     psum[g - 1], 128), psum[g]) by G prefix sums (a tile's expert found by
//     binary search; a tile in the gap after an expert's rows is empty);
//   - m_grouped_masked (the MoE decode step): G blocks of M_max rows, the
//     tiles of group g computing rows below masked_m[g];
//   - normal: one group of M rows.
// A and B are loaded through the kernel-parameter tensor maps (B's rows of
// group g start at row g * N), sfa through the stages, and the 128x128 B
// scales from global memory by the math threads (dgemm.load_block_scale).
// Like the k-grouped kernel, the result declares what each operation
// touches and holds no synchronization.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilding.h"

#include "dgemm/Heuristics/MGroupedConfig.h"

#include <memory>

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::kernel_building;

namespace {

/// A tile of the schedule: its group (negative: nothing to compute), its m-
/// and n-block, its number of 128-deep K blocks (0: nothing to load or
/// compute), the row of A's map its first row is, the sfa map's K-block
/// coordinate of its K block 0 (null: 0), the bound on the rows it stores
/// (null: the grouped layout says), and the block of d rows dgemm.store_rows
/// counts them in (null: `group`'s).
struct Tile {
  Value group, mBlock, nBlock, numKBlocks, aRow, sfaK0, rowLimit, rowBlock;
  /// The K element its K block 0 starts at (null: 0): the k-grouped BF16
  /// kernel's group offset.
  Value kOffset = Value();
};

/// How a kind maps the schedule's tiles to groups and rows. Both roles ask
/// it, so they agree on which tiles have K blocks.
class RowMap {
public:
  virtual ~RowMap() = default;
  /// The group count of the tile schedule.
  virtual Value scheduleGroups(Emitter &e, KernelOp kernel) const = 0;
  /// The tile at schedule group `g`, m-block `mb` (n-block left unset).
  virtual Tile tile(Emitter &e, KernelOp kernel, ConfigAttr config, Value g,
                    Value mb) const = 0;

  /// The number of schedule units: by default every (group, m-block,
  /// n-block) of `sched`.
  virtual Value total(Emitter &, KernelOp, ConfigAttr,
                      const TileSchedule &sched) const {
    return sched.total;
  }
  /// What the tile loop carries from one of a CTA's tiles to its next, for
  /// tileAt (by default nothing).
  virtual SmallVector<Value> cursorInit(Emitter &) const { return {}; }
  /// The tile of schedule unit `t`, given the cursor the CTA's previous
  /// tile left (`next`: the cursor for its next tile). By default `sched`
  /// decomposes `t`.
  virtual Tile tileAt(Emitter &e, KernelOp kernel, ConfigAttr config,
                      const TileSchedule &sched, Value t, ValueRange,
                      SmallVectorImpl<Value> &) const {
    auto [g, mb, nb] = sched.decompose(e, t);
    Tile tile = this->tile(e, kernel, config, g, mb);
    tile.nBlock = nb;
    return tile;
  }
};

/// K blocks of the kernel's K: 128-deep (FP8) or 64-deep (BF16).
Value kBlocksOf(Emitter &e, KernelOp kernel) {
  return e.ceilDiv(kernel.getArg(KernelOp::DimK),
                   kernel.getConfig().getBlockK());
}

/// m_grouped_contiguous: one schedule group over the M_sum rows; a tile's
/// expert is the grouped layout's (argument PtrKs) entry of its first row.
class GroupedLayoutRows final : public RowMap {
public:
  Value scheduleGroups(Emitter &e, KernelOp) const override { return e.i32(1); }
  Tile tile(Emitter &e, KernelOp kernel, ConfigAttr config, Value,
            Value mb) const override {
    OpBuilder &b = e.b;
    Value m0 = e.mul(mb, e.i32(config.getBlockM()));
    Value entry = e.loadK(kernel.getArg(KernelOp::PtrKs), m0);
    // An expert outside [0, G) is padding: nothing is read (B and sfb
    // would be read out of bounds) or written.
    Value valid = b.create<arith::AndIOp>(
        e.loc, e.cmp(arith::CmpIPredicate::sge, entry, e.i32(0)),
        e.cmp(arith::CmpIPredicate::slt, entry,
              kernel.getArg(KernelOp::NumGroups)));
    Value group = b.create<arith::SelectOp>(e.loc, valid, entry, e.i32(-1));
    Value numKBlocks =
        b.create<arith::SelectOp>(e.loc, valid, kBlocksOf(e, kernel), e.i32(0));
    return {group, mb, Value(), numKBlocks, m0, Value(), Value(), Value()};
  }
};

/// m_grouped_contiguous_psum: one schedule group over the M_sum rows; the
/// int32 array (argument PtrKs) holds G prefix sums, expert g's rows being
/// [start(g), end(g)) with start(0) = 0, start(g) = align(psum[g - 1], 128)
/// and end(g) = psum[g] (DeepGEMM's psum layout). A tile's expert is the
/// last g with start(g) <= its first row m0 (binary search: at most
/// ceil(log2 G) loads), and the tile computes rows below end(g) if m0 is
/// one of them. Every psum value is clamped into [0, M_sum] first, so that
/// any array (not ascending, out of range) gives an expert in [0, G) and
/// rows below M_sum: wrong input cannot make the kernel read or write out of
/// bounds.
class PrefixSumRows final : public RowMap {
public:
  Value scheduleGroups(Emitter &e, KernelOp) const override { return e.i32(1); }
  Tile tile(Emitter &e, KernelOp kernel, ConfigAttr config, Value,
            Value mb) const override {
    OpBuilder &b = e.b;
    Value mSum = kernel.getArg(KernelOp::DimM);
    Value m0 = e.mul(mb, e.i32(config.getBlockM()));
    Value groups = kernel.getArg(KernelOp::NumGroups);
    Value expert = search(e, kernel, mSum, groups, m0);
    Value end = psumAt(e, kernel, mSum, expert);
    // start(expert) <= m0 holds by the search (start(0) = 0).
    Value valid = e.cmp(arith::CmpIPredicate::ult, m0, end);
    Value numKBlocks =
        b.create<arith::SelectOp>(e.loc, valid, kBlocksOf(e, kernel), e.i32(0));
    Value group = b.create<arith::SelectOp>(e.loc, valid, expert, e.i32(-1));
    return {group, mb, Value(), numKBlocks, m0, Value(), end, e.i32(0)};
  }

private:
  /// psum[i] clamped into [0, mSum].
  static Value psumAt(Emitter &e, KernelOp kernel, Value mSum, Value i) {
    Value v = e.loadK(kernel.getArg(KernelOp::PtrKs), i);
    return e.b.create<arith::MinSIOp>(
        e.loc, e.b.create<arith::MaxSIOp>(e.loc, v, e.i32(0)), mSum);
  }

  /// The last g in [0, groups) with start(g) <= m0: lo = 0, hi = groups;
  /// while hi - lo > 1, mid = (lo + hi) / 2 moves lo (start(mid) <= m0) or
  /// hi. start(mid) = align(psum[mid - 1], 128), below 2^32 as an unsigned
  /// value (psum is clamped to M_sum < 2^31).
  static Value search(Emitter &e, KernelOp kernel, Value mSum, Value groups,
                      Value m0) {
    OpBuilder &b = e.b;
    Type i32 = b.getI32Type();
    auto loop = b.create<scf::WhileOp>(e.loc, TypeRange{i32, i32},
                                       ValueRange{e.i32(0), groups});
    {
      OpBuilder::InsertionGuard guard(b);
      Block *before =
          b.createBlock(&loop.getBefore(), {}, {i32, i32}, {e.loc, e.loc});
      Value lo = before->getArgument(0), hi = before->getArgument(1);
      Value more = e.cmp(arith::CmpIPredicate::ugt, e.sub(hi, lo), e.i32(1));
      b.create<scf::ConditionOp>(e.loc, more, ValueRange{lo, hi});
      Block *after =
          b.createBlock(&loop.getAfter(), {}, {i32, i32}, {e.loc, e.loc});
      lo = after->getArgument(0);
      hi = after->getArgument(1);
      Value mid = e.div(e.add(lo, hi), e.i32(2));
      Value prev = psumAt(e, kernel, mSum, e.sub(mid, e.i32(1)));
      Value start =
          e.mul(e.ceilDiv(prev, ::dgemm::heuristics::kMGroupedAlignment),
                e.i32(::dgemm::heuristics::kMGroupedAlignment));
      Value atOrBefore = e.cmp(arith::CmpIPredicate::ule, start, m0);
      b.create<scf::YieldOp>(
          e.loc,
          ValueRange{b.create<arith::SelectOp>(e.loc, atOrBefore, mid, lo),
                     b.create<arith::SelectOp>(e.loc, atOrBefore, hi, mid)});
    }
    return loop.getResult(0);
  }
};

/// m_grouped_masked: G schedule groups of M_max (the kernel's M) rows each;
/// group g's rows are rows g * M_max + r of A and d, and its valid rows are
/// those below masked_m[g] (argument PtrKs), clamped into [0, M_max] so that
/// no value of masked_m makes the kernel read or write out of bounds. sfa is
/// G * ceil(K / 128) rows of align(M_max, 4) floats: group g's K block kb is
/// row g * ceil(K / 128) + kb.
///
/// The schedule holds only the tiles with valid rows: group g contributes
/// ceil(limit_g / block_m) m-blocks by the n-blocks, in group order, and a
/// CTA's tile loop carries the group its previous tile was in and the
/// schedule unit that group starts at (the cursor), walking forward from
/// there: its units only grow, so its walks together step over each group
/// once (each role also reads all of masked_m once, for the total). Walking
/// every group's M_max rows instead gave a decode step's (few valid rows of
/// many groups) tiles to only some of the CTAs, the rest idling through empty
/// tiles.
class MaskedRows final : public RowMap {
public:
  Value scheduleGroups(Emitter &, KernelOp kernel) const override {
    return kernel.getArg(KernelOp::NumGroups);
  }

  Value total(Emitter &e, KernelOp kernel, ConfigAttr config,
              const TileSchedule &sched) const override {
    auto sum = e.b.create<scf::ForOp>(e.loc, e.i32(0),
                                      kernel.getArg(KernelOp::NumGroups),
                                      e.i32(1), ValueRange{e.i32(0)});
    OpBuilder::InsertionGuard guard(e.b);
    e.b.setInsertionPointToStart(sum.getBody());
    Value units = e.mul(mBlocksOf(e, kernel, config, sum.getInductionVar()),
                        sched.nBlocks);
    e.b.create<scf::YieldOp>(e.loc,
                             ValueRange{e.add(sum.getRegionIterArg(0), units)});
    e.b.setInsertionPointAfter(sum);
    return sum.getResult(0);
  }

  SmallVector<Value> cursorInit(Emitter &e) const override {
    return {e.i32(0), e.i32(0)};
  }

  Tile tileAt(Emitter &e, KernelOp kernel, ConfigAttr config,
              const TileSchedule &sched, Value t, ValueRange cursor,
              SmallVectorImpl<Value> &next) const override {
    OpBuilder &b = e.b;
    Type i32 = b.getI32Type();
    Value last = e.sub(kernel.getArg(KernelOp::NumGroups), e.i32(1));
    // From the cursor's group, move to the next while t is past the group's
    // units (the last group stops the walk: t < total keeps it from being
    // reached past its units).
    auto walk = b.create<scf::WhileOp>(e.loc, TypeRange{i32, i32, i32},
                                       ValueRange{cursor[0], cursor[1]});
    {
      OpBuilder::InsertionGuard guard(b);
      Block *before =
          b.createBlock(&walk.getBefore(), {}, {i32, i32}, {e.loc, e.loc});
      Value g = before->getArgument(0), start = before->getArgument(1);
      Value blocks = mBlocksOf(e, kernel, config, g);
      Value end = e.add(start, e.mul(blocks, sched.nBlocks));
      Value past = b.create<arith::AndIOp>(
          e.loc, e.cmp(arith::CmpIPredicate::uge, t, end),
          e.cmp(arith::CmpIPredicate::ult, g, last));
      b.create<scf::ConditionOp>(e.loc, past, ValueRange{g, start, blocks});
      Block *after = b.createBlock(&walk.getAfter(), {}, {i32, i32, i32},
                                   {e.loc, e.loc, e.loc});
      Value ag = after->getArgument(0), astart = after->getArgument(1);
      Value ablocks = after->getArgument(2);
      b.create<scf::YieldOp>(
          e.loc, ValueRange{e.add(ag, e.i32(1)),
                            e.add(astart, e.mul(ablocks, sched.nBlocks))});
    }
    Value g = walk.getResult(0), start = walk.getResult(1);
    next.append({g, start});
    auto [mb, nb] = sched.raster(e, e.sub(t, start), walk.getResult(2));
    Tile t0 = tile(e, kernel, config, g, mb);
    t0.nBlock = nb;
    return t0;
  }

  Tile tile(Emitter &e, KernelOp kernel, ConfigAttr config, Value g,
            Value mb) const override {
    OpBuilder &b = e.b;
    Value mMax = kernel.getArg(KernelOp::DimM);
    Value m0 = e.mul(mb, e.i32(config.getBlockM()));
    Value limit = limitOf(e, kernel, g);
    // A tile whose first row is past the limit has nothing to compute.
    Value valid = e.cmp(arith::CmpIPredicate::ult, m0, limit);
    Value kBlocks = kBlocksOf(e, kernel);
    Value numKBlocks =
        b.create<arith::SelectOp>(e.loc, valid, kBlocks, e.i32(0));
    return {g,
            mb,
            Value(),
            numKBlocks,
            e.add(e.mul(g, mMax), m0),
            e.mul(g, kBlocks),
            limit,
            Value()};
  }

private:
  /// masked_m[g] clamped into [0, M_max].
  static Value limitOf(Emitter &e, KernelOp kernel, Value g) {
    Value masked = e.loadK(kernel.getArg(KernelOp::PtrKs), g);
    return e.b.create<arith::MinSIOp>(
        e.loc, e.b.create<arith::MaxSIOp>(e.loc, masked, e.i32(0)),
        kernel.getArg(KernelOp::DimM));
  }
  /// Group g's m-blocks with valid rows.
  static Value mBlocksOf(Emitter &e, KernelOp kernel, ConfigAttr config,
                         Value g) {
    return e.ceilDiv(limitOf(e, kernel, g), config.getBlockM());
  }
};

/// normal: one group of M rows, every tile valid, rows below M stored.
class AllRows final : public RowMap {
public:
  Value scheduleGroups(Emitter &e, KernelOp) const override { return e.i32(1); }
  Tile tile(Emitter &e, KernelOp kernel, ConfigAttr config, Value,
            Value mb) const override {
    Value m0 = e.mul(mb, e.i32(config.getBlockM()));
    return {e.i32(0),
            mb,
            Value(),
            kBlocksOf(e, kernel),
            m0,
            Value(),
            kernel.getArg(KernelOp::DimM),
            Value()};
  }
};

/// k_grouped_contiguous (BF16): G schedule groups of M rows; group g's
/// K_g = ks[g] (argument PtrKs, negative read as 0) rows of K start at the
/// sum of the groups' before it, in the one tensor map of A [sum_k, M] and
/// of B [sum_k, N]; its tiles store d row g * M + r for every row r < M
/// (a group with K_g = 0 stores its zero product: d = 0, or d unchanged
/// when the kernel accumulates). The runtime checks every K_g is a multiple
/// of block_k, so that no K block straddles two groups.
class KGroupedRows final : public RowMap {
public:
  Value scheduleGroups(Emitter &, KernelOp kernel) const override {
    return kernel.getArg(KernelOp::NumGroups);
  }
  Tile tile(Emitter &e, KernelOp kernel, ConfigAttr config, Value g,
            Value mb) const override {
    OpBuilder &b = e.b;
    Value ks = kernel.getArg(KernelOp::PtrKs);
    auto kOf = [&](OpBuilder &ob, Value i) {
      Emitter ie{ob, e.loc};
      return ob.create<arith::MaxSIOp>(e.loc, ie.loadK(ks, i), ie.i32(0))
          .getResult();
    };
    // The group's K offset: the sum of the K_i before it.
    auto prefix = b.create<scf::ForOp>(e.loc, e.i32(0), g, e.i32(1),
                                       ValueRange{e.i32(0)});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(prefix.getBody());
      Value sum =
          e.add(prefix.getRegionIterArg(0), kOf(b, prefix.getInductionVar()));
      b.create<scf::YieldOp>(e.loc, ValueRange{sum});
    }
    Value m0 = e.mul(mb, e.i32(config.getBlockM()));
    Tile t{g,
           mb,
           Value(),
           e.div(kOf(b, g), e.i32(config.getBlockK())),
           m0,
           Value(),
           kernel.getArg(KernelOp::DimM),
           Value()};
    t.kOffset = prefix.getResult(0);
    return t;
  }
};

std::unique_ptr<RowMap> rowMapFor(GemmKind kind) {
  switch (kind) {
  case GemmKind::k_grouped_contiguous:
    return std::make_unique<KGroupedRows>();
  case GemmKind::m_grouped_masked:
    return std::make_unique<MaskedRows>();
  case GemmKind::normal:
    return std::make_unique<AllRows>();
  case GemmKind::m_grouped_contiguous_psum:
    return std::make_unique<PrefixSumRows>();
  default:
    return std::make_unique<GroupedLayoutRows>();
  }
}

class MGroupedKernelBuilder {
public:
  MGroupedKernelBuilder(GemmOp gemm, OpBuilder &builder)
      : b(builder), loc(gemm.getLoc()), config(*gemm.getConfig()),
        rows(rowMapFor(config.getKind())) {}

  void build() {
    auto [kernel, ws] = createKernel(b, loc, config);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ws.getProducer().front());
    buildProducer(kernel);
    b.setInsertionPointToStart(&ws.getMath().front());
    buildMath(kernel);
  }

private:
  TileSchedule schedule(Emitter &e, KernelOp kernel) {
    return TileSchedule::build(e, kernel, config,
                               rows->scheduleGroups(e, kernel));
  }

  /// A role's persistent loop over its CTA's tiles, carrying the pipeline
  /// iteration (and the row map's cursor). `body` builds a tile's work,
  /// starting at pipeline iteration `kit`, and returns the iteration after
  /// it. `enter`, if given, is built right before the loop.
  scf::ForOp tileLoop(Emitter &e, KernelOp kernel,
                      function_ref<Value(Tile &, Value)> body,
                      function_ref<void()> enter = nullptr) {
    TileSchedule sched = schedule(e, kernel);
    Value total = rows->total(e, kernel, config, sched);
    if (enter)
      enter();
    SmallVector<Value> inits{e.i32(0)};
    llvm::append_range(inits, rows->cursorInit(e));
    auto tiles =
        b.create<scf::ForOp>(loc, sched.first, total, sched.step, inits);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tiles.getBody());
    SmallVector<Value> yields;
    Tile tile = rows->tileAt(e, kernel, config, sched, tiles.getInductionVar(),
                             tiles.getRegionIterArgs().drop_front(), yields);
    yields.insert(yields.begin(), body(tile, tiles.getRegionIterArg(0)));
    b.create<scf::YieldOp>(loc, yields);
    return tiles;
  }

  Value stageOf(Value it) {
    auto st = b.create<StageOp>(loc, b.getI32Type(), b.getI32Type(), it,
                                b.getI32IntegerAttr(config.getStages()));
    return st.getStage();
  }

  void buildProducer(KernelOp kernel) {
    Emitter e{b, loc};
    tileLoop(e, kernel, [&](Tile &tile, Value kit0) {
      return produceTile(e, kernel, tile, kit0);
    });
  }

  /// The producer's loads of one tile from pipeline iteration `kit0`.
  Value produceTile(Emitter &e, KernelOp kernel, Tile &tile, Value kit0) {
    Value m0 = e.mul(tile.mBlock, e.i32(config.getBlockM()));
    Value n0 = e.mul(tile.nBlock, e.i32(config.getBlockN()));
    // Group g's B is rows [g * N, (g + 1) * N) of the [G * N, K] map (K-major
    // B), or K rows [g * K, (g + 1) * K) of the [G * K, N] one (the m-grouped
    // BF16 nn kernel's MN-major B).
    Value bRow = e.add(e.mul(tile.group, kernel.getArg(KernelOp::DimN)), n0);
    bool groupedKRows = config.getMajorB() == Majorness::mn &&
                        config.getKind() != GemmKind::normal &&
                        config.getKind() != GemmKind::k_grouped_contiguous;
    Value bK0 = groupedKRows ? e.mul(tile.group, kernel.getArg(KernelOp::DimK))
                             : Value();
    auto kloop = b.create<scf::ForOp>(loc, e.i32(0), tile.numKBlocks, e.i32(1),
                                      ValueRange{kit0});
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(kloop.getBody());
      Value kb = kloop.getInductionVar();
      Value kit = kloop.getRegionIterArg(0);
      Value stage = stageOf(kit);
      // The K element of the block: tensor-map coordinates are elements.
      Value kx = e.mul(kb, e.i32(config.getBlockK()));
      if (tile.kOffset)
        kx = e.add(tile.kOffset, kx);
      Value sfaK;
      if (!config.isBf16())
        sfaK = tile.sfaK0 ? e.add(tile.sfaK0, kb) : kb;
      // (x, y) are the map's (inner, outer) coordinates: (K, row) for a
      // K-major operand, (M or N, K) for an MN-major one.
      if (config.getMajorA() == Majorness::mn)
        b.create<TmaLoadOp>(loc, TmaOperand::a, stage, tile.aRow, kx, Value(),
                            /*multicast=*/false);
      else
        b.create<TmaLoadOp>(loc, TmaOperand::a, stage, kx, tile.aRow, Value(),
                            /*multicast=*/false);
      if (config.getMajorB() == Majorness::mn)
        b.create<TmaLoadOp>(loc, TmaOperand::b, stage, n0,
                            bK0 ? e.add(bK0, kx) : kx, Value(),
                            /*multicast=*/false);
      else
        b.create<TmaLoadOp>(loc, TmaOperand::b, stage, kx, bRow, Value(),
                            /*multicast=*/false);
      if (sfaK)
        b.create<TmaLoadOp>(loc, TmaOperand::sfa, stage, m0, sfaK, Value(),
                            /*multicast=*/false);
      b.create<scf::YieldOp>(loc, ValueRange{e.add(kit, e.i32(1))});
    }
    return kloop.getResult(0);
  }

  /// The BF16 kernels' math role: each K block's WGMMAs accumulate onto
  /// the previous block's fragment (a chained dgemm.mma; no scales, no
  /// promotion, so no turns), then the fragment goes to d.
  ///
  /// The block loop keeps one block in flight: the first block is issued
  /// before it, and each iteration issues its block onto the fragment still
  /// being written and carries that fragment and its stage on (scf.for
  /// iter_args fed by values in flight). dgemm-place-sync then completes
  /// all but the newest group at the end of an iteration (wgmma.wait_group
  /// 1) and releases the previous block's stage there, so the tensor cores
  /// never wait for the issue of the next block. A tile with no K block
  /// (a k-grouped group with K_g = 0) stores the zero fragment.
  void buildBf16Math(KernelOp kernel) {
    Emitter e{b, loc};
    tileLoop(e, kernel,
             [&](Tile &tile, Value kit0) { return bf16Tile(e, tile, kit0); });
  }

  /// One tile of the BF16 math role from pipeline iteration `kit0`.
  Value bf16Tile(Emitter &e, Tile &tile, Value kit0) {
    VectorType accType =
        VectorType::get({config.getBlockN() / 2}, b.getF32Type());
    Value rowBlock = tile.rowBlock ? tile.rowBlock : tile.group;
    auto any = b.create<scf::IfOp>(
        loc, TypeRange{b.getI32Type()},
        e.cmp(arith::CmpIPredicate::sgt, tile.numKBlocks, e.i32(0)),
        /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&any.getThenRegion().front());
      Value first = stageOf(kit0);
      Value acc0 = b.create<MmaOp>(loc, accType, first, Value(), 0);
      auto kloop =
          b.create<scf::ForOp>(loc, e.i32(1), tile.numKBlocks, e.i32(1),
                               ValueRange{e.add(kit0, e.i32(1)), acc0, first});
      {
        OpBuilder::InsertionGuard g3(b);
        b.setInsertionPointToStart(kloop.getBody());
        Value kit = kloop.getRegionIterArg(0);
        Value stage = stageOf(kit);
        Value acc =
            b.create<MmaOp>(loc, accType, stage, kloop.getRegionIterArg(1), 0);
        b.create<scf::YieldOp>(loc,
                               ValueRange{e.add(kit, e.i32(1)), acc, stage});
      }
      b.create<StoreRowsOp>(loc, ValueRange{kloop.getResult(1)}, rowBlock,
                            tile.mBlock, tile.nBlock, tile.rowLimit);
      b.create<scf::YieldOp>(loc, ValueRange{kloop.getResult(0)});
    }
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(&any.getElseRegion().front());
      Value zeros = b.create<arith::ConstantOp>(
          loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
      b.create<StoreRowsOp>(loc, ValueRange{zeros}, rowBlock, tile.mBlock,
                            tile.nBlock, tile.rowLimit);
      b.create<scf::YieldOp>(loc, ValueRange{kit0});
    }
    return any.getResult(0);
  }

  void buildMath(KernelOp kernel) {
    if (config.isBf16())
      return buildBf16Math(kernel);
    Emitter e{b, loc};
    // Two math warpgroups take turns issuing to the tensor cores (as in the
    // k-grouped kernel): one's WGMMAs run while the other promotes.
    bool alternate = config.getMathWarpgroups() >= 2;
    tileLoop(
        e, kernel,
        [&](Tile &tile, Value kit0) {
          return fp8Tile(e, tile, kit0, alternate);
        },
        [&] {
          if (alternate)
            b.create<TurnOp>(loc, TurnAction::start, ValueRange{});
        });
    if (alternate)
      b.create<TurnOp>(loc, TurnAction::finish, ValueRange{});
  }

  /// One tile of the FP8 math role from pipeline iteration `kit0`.
  Value fp8Tile(Emitter &e, Tile &tile, Value kit0, bool alternate) {
    int64_t width = config.getBlockN();
    VectorType accType = VectorType::get({width / 2}, b.getF32Type());
    VectorType sfaType = VectorType::get({2}, b.getF32Type());
    Value zeros = b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
    auto kloop = b.create<scf::ForOp>(loc, e.i32(0), tile.numKBlocks, e.i32(1),
                                      ValueRange{kit0, zeros});
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
      Value acc = b.create<MmaOp>(loc, accType, stage, Value(), 0);
      // The turn passes as soon as this warpgroup's WGMMAs are issued, not
      // after they complete: the other warpgroup's WGMMAs then queue behind
      // them on the tensor cores while this one waits and promotes
      // (bench/NOTES.md, "The m-grouped kernel: where the time goes": 1.00-
      // 1.22x over passing after completion, and ahead of no turns on three
      // of DeepGEMM's four shapes).
      if (alternate)
        b.create<TurnOp>(loc, TurnAction::pass, ValueRange{});
      sum = b.create<PromoteOp>(loc, accType, sum, acc, sfa, Value(), sfb, 0);
      b.create<scf::YieldOp>(loc, ValueRange{e.add(kit, e.i32(1)), sum});
    }
    b.create<StoreRowsOp>(loc, ValueRange{kloop.getResult(1)},
                          tile.rowBlock ? tile.rowBlock : tile.group,
                          tile.mBlock, tile.nBlock, tile.rowLimit);
    return kloop.getResult(0);
  }

  OpBuilder &b;
  Location loc;
  ConfigAttr config;
  std::unique_ptr<RowMap> rows;
};

} // namespace

void kernel_building::buildMGroupedKernel(GemmOp gemm, OpBuilder &b) {
  MGroupedKernelBuilder(gemm, b).build();
}
