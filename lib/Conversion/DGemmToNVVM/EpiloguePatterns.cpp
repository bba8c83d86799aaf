//===- EpiloguePatterns.cpp - The tile's sums to d ------------------------===//
//
// dgemm.epilogue: d = c + sum from registers (16-byte accesses with
// quad-ordered B), a copy of c for tiles without K blocks, and the
// red.global.add reductions of in-place and reduction kernels; and the c
// prefetch into L2 that the epilogue (or the park) relies on.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include <functional>

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

/// The number of 128-deep blocks of the tile whose sums are `sums`: the
/// upper bound of the block loop that feeds them (dgemm-lower-to-kernel's
/// structure); null if the structure is not recognized.
static Value tileBlocks(ValueRange sums) {
  if (auto kloop = sums.front().getDefiningOp<scf::ForOp>())
    return kloop.getUpperBound();
  return Value();
}

/// Every math thread prefetches its share of the tile's c lines into L2.
static void emitPrefetch(KernelContext &k, OpBuilder &b, Location loc,
                         Value group, Value mBlock, Value nBlock) {
  auto c = [&](int64_t v) -> Value {
    return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
  };
  ConfigAttr config = k.config;
  auto arg = [&](KernelOp::Arg a) { return k.arg(a); };
  auto globalPtr = LLVM::LLVMPointerType::get(k.ctx, 1);
  auto genericPtr = LLVM::LLVMPointerType::get(k.ctx);
  auto ext = [&](Value v) {
    return b.create<arith::ExtUIOp>(loc, b.getI64Type(), v).getResult();
  };
  int64_t lines = (config.getBlockN() * 4 + 127) / 128;
  Value t = b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
  Value wg = b.create<arith::SubIOp>(
      loc, b.create<arith::DivUIOp>(loc, t, c(128)), c(1));
  Value inWg = b.create<arith::RemUIOp>(loc, t, c(128));
  Value rowBase = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, mBlock, c(config.getBlockM())),
      b.create<arith::MulIOp>(loc, wg, c(64)));
  Value nBase = b.create<arith::MulIOp>(loc, nBlock, c(config.getBlockN()));
  Value m = arg(KernelOp::DimM), n = arg(KernelOp::DimN);
  Value groupRows = b.create<arith::MulIOp>(loc, ext(group), ext(m));
  for (int64_t r = 0; r * 128 < 64 * lines; ++r) {
    Value idx = b.create<arith::AddIOp>(loc, inWg, c(128 * r));
    Value row = b.create<arith::AddIOp>(
        loc, rowBase, b.create<arith::DivUIOp>(loc, idx, c(lines)));
    Value col = b.create<arith::AddIOp>(
        loc, nBase,
        b.create<arith::MulIOp>(
            loc, b.create<arith::RemUIOp>(loc, idx, c(lines)), c(32)));
    Value ok = b.create<arith::AndIOp>(
        loc,
        b.create<arith::AndIOp>(
            loc,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, idx,
                                    c(64 * lines)),
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, m)),
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, n));
    Value off = b.create<arith::AddIOp>(
        loc,
        b.create<arith::MulIOp>(
            loc, b.create<arith::AddIOp>(loc, groupRows, ext(row)), ext(n)),
        ext(col));
    Value ptr = b.create<LLVM::GEPOp>(loc, globalPtr, b.getF32Type(),
                                      arg(KernelOp::PtrC), ValueRange{off});
    auto guard = b.create<scf::IfOp>(loc, ok, /*withElse=*/false);
    OpBuilder gb = guard.getThenBodyBuilder();
    Value generic = gb.create<LLVM::AddrSpaceCastOp>(loc, genericPtr, ptr);
    gb.create<LLVM::InlineAsmOp>(
        loc, TypeRange{}, ValueRange{generic}, "prefetch.global.L2 [$0];", "l",
        /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
  }
}

/// Prefetches the tile's c (= d when accumulating in place) into L2 while the
/// block loop runs, so that the epilogue's reads find it there: every math
/// thread prefetches a few of its warpgroup's 128-byte lines when block
/// max(0, blocks - prefetchCBlocks) is issued (when the tile starts for
/// prefetchCBlocks = 0), and only for tiles of at most prefetchCMaxBlocks
/// blocks (0: every tile), whose epilogue is a large share of the tile's
/// time. Kernels that load c prefetch 4 blocks before the tile's end for
/// every tile; in-place kernels at the tile's start for tiles of at most
/// kRedEpilogueTileBlocks blocks (bench/NOTES.md, section 9: a prefetch
/// inside the block loop made long tiles 2-4% slower, none at all made short
/// ones 10-45% slower).
///
/// The block loops say which blocks they issue (`dgemm.first_block` = [per,
/// first]: iteration i issues blocks per * i + first onwards, blocks before
/// `first` are issued before the loop); the prefetch goes into the iteration
/// that issues block `at`, or before the loop if that block is issued there.
void nvvm_lowering::prefetchTileC(KernelContext &k, Operation *op,
                                  ValueRange sums, Value group, Value mBlock,
                                  Value nBlock) {
  const int64_t prefetchCBlocks = k.inPlace ? 0 : 4;
  const int64_t prefetchCMaxBlocks =
      k.inPlace ? ::dgemm::heuristics::kRedEpilogueTileBlocks : 0;
  auto i32 = [&](OpBuilder &b, Location loc, int64_t v) -> Value {
    return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
  };
  Value numBlocks = tileBlocks(sums);
  SmallVector<scf::ForOp> loops;
  for (Operation &prev : *op->getBlock()) {
    if (&prev == op)
      break;
    prev.walk([&](scf::ForOp loop) {
      if (loop->hasAttr("dgemm.first_block"))
        loops.push_back(loop);
    });
  }
  if (!numBlocks || loops.empty())
    return;
  Location loc = op->getLoc();
  // Prefetches under `cond` (none: always) at `b`'s insertion point.
  auto prefetchAt = [&](OpBuilder &b, Value cond) {
    if (prefetchCMaxBlocks > 0) {
      Value shortTile =
          b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, numBlocks,
                                  i32(b, loc, prefetchCMaxBlocks));
      cond = cond ? b.create<arith::AndIOp>(loc, cond, shortTile).getResult()
                  : shortTile;
    }
    if (cond) {
      auto when = b.create<scf::IfOp>(loc, cond, /*withElse=*/false);
      b.setInsertionPoint(when.thenBlock()->getTerminator());
    }
    emitPrefetch(k, b, loc, group, mBlock, nBlock);
  };
  auto blockAt = [&](OpBuilder &b) -> Value {
    return b.create<arith::MaxSIOp>(
        loc,
        b.create<arith::SubIOp>(loc, numBlocks, i32(b, loc, prefetchCBlocks)),
        i32(b, loc, 0));
  };
  if (prefetchCBlocks == 0) { // once, before the first loop
    // Not for a tile without K blocks: its epilogue touches nothing (an
    // empty group in place), so its c would be read from memory for nothing.
    OpBuilder b(loops.front());
    prefetchAt(b, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                          numBlocks, i32(b, loc, 0)));
    return;
  }
  for (scf::ForOp loop : loops) {
    auto shape = loop->getAttrOfType<ArrayAttr>("dgemm.first_block");
    int64_t per = cast<IntegerAttr>(shape[0]).getInt();
    int64_t first = cast<IntegerAttr>(shape[1]).getInt();
    if (first > 0) {
      OpBuilder b(loop);
      prefetchAt(b, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult,
                                            blockAt(b), i32(b, loc, first)));
    }
    OpBuilder b(loop.getBody(), loop.getBody()->begin());
    Value at = blockAt(b);
    Value from = loop.getInductionVar();
    if (per != 1)
      from = b.create<arith::MulIOp>(loc, from, i32(b, loc, per));
    if (first != 0)
      from = b.create<arith::AddIOp>(loc, from, i32(b, loc, first));
    prefetchAt(
        b,
        b.create<arith::AndIOp>(
            loc,
            b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, at, from),
            b.create<arith::CmpIOp>(
                loc, arith::CmpIPredicate::ult, at,
                b.create<arith::AddIOp>(loc, from, i32(b, loc, per)))));
  }
}

namespace {
/// One dgemm.epilogue being lowered: the executing thread's place in the
/// tile, and the emitters of the ways its sums reach d (lower()).
class TileEpilogue : KernelEmitter {
public:
  TileEpilogue(const KernelEmitter &e, EpilogueOp op, OpBuilder &b)
      : KernelEmitter(e), op(op), b(b), loc(op.getLoc()), n(config.getBlockN()),
        sums(op.getSums()) {
    f = fragmentOf(b, loc, tid(b, loc), quadB);
    m = arg(KernelOp::DimM);
    nDim = arg(KernelOp::DimN);
    mBase = b.create<arith::MulIOp>(loc, op.getMBlock(),
                                    i32(b, loc, config.getBlockM()));
    nBase = b.create<arith::MulIOp>(loc, op.getNBlock(),
                                    i32(b, loc, config.getBlockN()));
    row0 = b.create<arith::AddIOp>(loc, mBase, f.rowInTile);
    col0 = b.create<arith::AddIOp>(loc, nBase, f.colInTile);
    f32 = b.getF32Type();
    groupRows = b.create<arith::MulIOp>(loc, ext(b, op.getGroup()), ext(b, m));
    // Default: every C load of the thread is issued before the first add, so
    // their latencies overlap. Interior tiles (all but the last row/column
    // of tiles when M or N is not a multiple of the block) need no guard at
    // all; an edge tile clamps the address of an out-of-range chunk to
    // element 0 (always valid) for its load and guards only the store, so it
    // stays as fast as an interior one.
    Value fullRows = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ule,
        b.create<arith::AddIOp>(loc, mBase, i32(b, loc, config.getBlockM())),
        m);
    Value fullCols = b.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ule,
        b.create<arith::AddIOp>(loc, nBase, i32(b, loc, n)), nDim);
    interior = b.create<arith::AndIOp>(loc, fullRows, fullCols);
  }

  /// Emits the epilogue at `b`'s insertion point and erases the op.
  LogicalResult lower(ConversionPatternRewriter &rewriter);

private:
  // 16-byte reductions (KernelContext::redVectorWidth = 4):
  // lanes q and q ^ 1 of a quad (q = lane % 4) swap half of their sums with
  // one shuffle per element, so that an even lane holds 4 consecutive columns
  // of row r and an odd lane 4 of row r + 8 in every 8-column group. The 4
  // columns start at a multiple of 4 and N is one, so they lie inside N
  // together and 16-byte alignment holds. Every lane shuffles; guards cover
  // the memory accesses only.
  struct QuadPairRows {
    Value odd;    ///< lane is odd: it takes row r + 8
    Value colSel; ///< first of its 4 columns in 8-column group 0
    Value rowOff; ///< element offset of its row
    Value rowOk;  ///< its row lies inside M
  };
  // d = c + sum over the thread's chunks of `width` floats: every load of c
  // first (their latencies overlap; out of range, a guarded chunk loads
  // element 0), then per chunk the add and the store, guarded by `ok`. The
  // chunk's offset, bound and sum are built in that order; a sum that
  // shuffles between lanes is built before the guard, so that every lane
  // takes part.
  struct Chunk {
    std::function<Value(OpBuilder &)> offset, inBounds, sum;
  };

  /// A tile without K blocks (a group with K = 0) has nothing to add: in
  /// place, d already is c and the tile touches nothing; with a separate c
  /// it copies c to d as loaded. d stays bitwise c either way (c + 0 would
  /// turn -0.0 into +0.0), and an in-place call does not move an empty
  /// group's output through the SMs at all. The in-place kernel's reductions
  /// skip such tiles themselves; where the block count is not known here,
  /// every tile takes the paths of lower(). Leaves `b` in the branch of
  /// tiles with K blocks.
  void copyEmptyTile();

  Value ext(OpBuilder &bb, Value v) {
    return bb.create<arith::ExtUIOp>(loc, bb.getI64Type(), v).getResult();
  }

  // Element offset of (row0 + 8i, col0 + 8j) in c/d. The column is added in
  // 64 bits, so that LLVM folds 8j into the address whatever it knows of
  // the n-block (a 32-bit sum it cannot prove free of wrapping costs a
  // 64-bit address per chunk, and spills in the wide tiles).
  Value offsetOf(OpBuilder &bb, int i, int64_t j) {
    Value row = bb.create<arith::AddIOp>(loc, row0, i32(bb, loc, 8 * i));
    Value rowOff = bb.create<arith::MulIOp>(
        loc, bb.create<arith::AddIOp>(loc, groupRows, ext(bb, row)),
        ext(bb, nDim));
    Value col = bb.create<arith::AddIOp>(
        loc, ext(bb, col0),
        bb.create<arith::ConstantIntOp>(loc, bb.getI64Type(), f.colOf(j)));
    return bb.create<arith::AddIOp>(loc, rowOff, col).getResult();
  }

  Value mine(OpBuilder &bb, int i, int64_t j) {
    return sums.pair(bb, loc, i, j);
  }

  Value ptrAt(OpBuilder &bb, KernelOp::Arg base, Value off) {
    return bb.create<LLVM::GEPOp>(loc, globalPtr(), f32, arg(base),
                                  ValueRange{off});
  }

  // Whether chunk (i, j) lies inside M x N. N is a multiple of 4 and the
  // column even, so col < N covers col + 1 too.
  Value inBounds(OpBuilder &bb, int i, int64_t j) {
    Value row = bb.create<arith::AddIOp>(loc, row0, i32(bb, loc, 8 * i));
    Value col = bb.create<arith::AddIOp>(loc, col0, i32(bb, loc, f.colOf(j)));
    return bb
        .create<arith::AndIOp>(
            loc,
            bb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, m),
            bb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, nDim))
        .getResult();
  }

  QuadPairRows quadPairRows(OpBuilder &t) {
    Value lane = t.create<arith::RemUIOp>(loc, tid(t, loc), i32(t, loc, 32));
    Value odd = t.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::ne,
        t.create<arith::AndIOp>(loc, lane, i32(t, loc, 1)), i32(t, loc, 0));
    Value rowSel = t.create<arith::SelectOp>(
        loc, odd, t.create<arith::AddIOp>(loc, row0, i32(t, loc, 8)), row0);
    Value colSel = t.create<arith::SelectOp>(
        loc, odd, t.create<arith::SubIOp>(loc, col0, i32(t, loc, 2)), col0);
    Value rowOff = t.create<arith::MulIOp>(
        loc, t.create<arith::AddIOp>(loc, groupRows, ext(t, rowSel)),
        ext(t, nDim));
    return QuadPairRows{
        odd, colSel, rowOff,
        t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, rowSel, m)};
  }

  // The thread's 4 sums of 8-column group j after the swap.
  Value swapped(OpBuilder &t, const QuadPairRows &q, int64_t j) {
    Value all = t.create<arith::ConstantIntOp>(loc, t.getI32Type(), -1);
    Value top = mine(t, 0, j), bottom = mine(t, 1, j);
    Value give = t.create<arith::SelectOp>(loc, q.odd, top, bottom);
    Value kept = t.create<arith::SelectOp>(loc, q.odd, bottom, top);
    Value got[2], keep[2];
    for (int e = 0; e < 2; ++e) {
      Value x = t.create<LLVM::ExtractElementOp>(loc, give, i32(t, loc, e));
      got[e] = t.create<NVVM::ShflOp>(loc, f32, all, x, i32(t, loc, 1),
                                      i32(t, loc, 0x1f), NVVM::ShflKind::bfly,
                                      UnitAttr());
      keep[e] = t.create<LLVM::ExtractElementOp>(loc, kept, i32(t, loc, e));
    }
    // Even lane: its row-r pair, then the odd neighbour's. Odd lane: the
    // even neighbour's row-(r + 8) pair, then its own.
    Value out = t.create<LLVM::UndefOp>(loc, VectorType::get({4}, f32));
    for (int e = 0; e < 2; ++e) {
      out = t.create<LLVM::InsertElementOp>(
          loc, out, t.create<arith::SelectOp>(loc, q.odd, got[e], keep[e]),
          i32(t, loc, e));
      out = t.create<LLVM::InsertElementOp>(
          loc, out, t.create<arith::SelectOp>(loc, q.odd, keep[e], got[e]),
          i32(t, loc, 2 + e));
    }
    return out;
  }

  // Whether group j's 4 columns of the thread's row lie inside M x N.
  Value wideInBounds(OpBuilder &t, const QuadPairRows &q, int64_t j) {
    Value col = t.create<arith::AddIOp>(loc, q.colSel, i32(t, loc, 8 * j));
    return t
        .create<arith::AndIOp>(
            loc, q.rowOk,
            t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, nDim))
        .getResult();
  }

  // Quad-ordered B rows: the thread's sums of groups 2g and 2g + 1 in row
  // half i are 4 consecutive columns (col0 + 16g ...), accessed 16 bytes at
  // a time without shuffles. N is a multiple of 4 and so is the column, so
  // col < N covers all 4.
  Value quadOf(OpBuilder &t, int i, int64_t g) {
    Value lo = mine(t, i, 2 * g), hi = mine(t, i, 2 * g + 1);
    Value out = t.create<LLVM::UndefOp>(loc, VectorType::get({4}, f32));
    for (int e = 0; e < 4; ++e)
      out = t.create<LLVM::InsertElementOp>(
          loc, out,
          t.create<LLVM::ExtractElementOp>(loc, e < 2 ? lo : hi,
                                           i32(t, loc, e % 2)),
          i32(t, loc, e));
    return out;
  }

  // Element offset of the thread's first column in row half i; group pair g
  // adds 16g (a constant, folded into the address).
  Value quadRowOffset(OpBuilder &t, int i) {
    Value row = t.create<arith::AddIOp>(loc, row0, i32(t, loc, 8 * i));
    Value rowOff = t.create<arith::MulIOp>(
        loc, t.create<arith::AddIOp>(loc, groupRows, ext(t, row)),
        ext(t, nDim));
    return t.create<arith::AddIOp>(loc, rowOff, ext(t, col0)).getResult();
  }

  Value quadInBounds(OpBuilder &t, int i, int64_t g) {
    Value row = t.create<arith::AddIOp>(loc, row0, i32(t, loc, 8 * i));
    Value col = t.create<arith::AddIOp>(loc, col0, i32(t, loc, 16 * g));
    return t
        .create<arith::AndIOp>(
            loc,
            t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, row, m),
            t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, col, nDim))
        .getResult();
  }

  void addChunks(OpBuilder &t, bool guarded, int64_t width, int64_t count,
                 function_ref<Chunk(int64_t)> chunkAt, bool sumBeforeGuard) {
    Value zero64 = t.create<arith::ConstantIntOp>(loc, t.getI64Type(), 0);
    auto vt = VectorType::get({width}, f32);
    unsigned align = 4 * width;
    SmallVector<Value> offs, oks, cs;
    for (int64_t k = 0; k < count; ++k) {
      Chunk chunk = chunkAt(k);
      Value off = chunk.offset(t);
      Value loadOff = off;
      if (guarded) {
        oks.push_back(chunk.inBounds(t));
        loadOff = t.create<arith::SelectOp>(loc, oks.back(), off, zero64);
      }
      offs.push_back(off);
      cs.push_back(t.create<LLVM::LoadOp>(
          loc, vt, ptrAt(t, KernelOp::PtrC, loadOff), align));
    }
    for (int64_t k = 0; k < count; ++k) {
      Chunk chunk = chunkAt(k);
      Value out = sumBeforeGuard && addSums ? chunk.sum(t) : Value();
      OpBuilder sb = t;
      if (guarded)
        sb = t.create<scf::IfOp>(loc, oks[k], /*withElseRegion=*/false)
                 .getThenBodyBuilder();
      if (!out && addSums)
        out = chunk.sum(sb);
      Value to = ptrAt(sb, KernelOp::PtrD, offs[k]);
      Value value = addSums
                        ? sb.create<LLVM::FAddOp>(loc, cs[k], out).getResult()
                        : cs[k];
      sb.create<LLVM::StoreOp>(loc, value, to, align);
    }
  }

  // Quad-ordered B: chunk (i, g) is row half i's 4 columns col0 + 16g.
  void batchedQuads(OpBuilder &t, bool guarded) {
    Value first[2];
    int64_t pairs = n / 16;
    addChunks(
        t, guarded, 4, 2 * pairs,
        [&](int64_t k) -> Chunk {
          int i = int(k / pairs);
          int64_t g = k % pairs;
          return {[&, i, g](OpBuilder &bb) {
                    if (g == 0)
                      first[i] = quadRowOffset(bb, i);
                    return bb.create<arith::AddIOp>(
                        loc, first[i],
                        bb.create<arith::ConstantIntOp>(loc, bb.getI64Type(),
                                                        16 * g));
                  },
                  [&, i, g](OpBuilder &bb) { return quadInBounds(bb, i, g); },
                  [&, i, g](OpBuilder &bb) { return quadOf(bb, i, g); }};
        },
        /*sumBeforeGuard=*/false);
  }

  void batched(OpBuilder &t, bool guarded) {
    if (quadB)
      return batchedQuads(t, guarded);
    int64_t groups = n / 8;
    addChunks(
        t, guarded, 2, 2 * groups,
        [&](int64_t k) -> Chunk {
          int i = int(k / groups);
          int64_t j = k % groups;
          return {[&, i, j](OpBuilder &bb) { return offsetOf(bb, i, j); },
                  [&, i, j](OpBuilder &bb) { return inBounds(bb, i, j); },
                  [&, i, j](OpBuilder &bb) { return mine(bb, i, j); }};
        },
        /*sumBeforeGuard=*/false);
  }

  Value inPlaceCond() {
    if (sameCD)
      return sameCD;
    auto asInt = [&](KernelOp::Arg ptr) {
      return b.create<LLVM::PtrToIntOp>(loc, b.getI64Type(), arg(ptr))
          .getResult();
    };
    sameCD =
        b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq,
                               asInt(KernelOp::PtrC), asInt(KernelOp::PtrD));
    return sameCD;
  }

  // 16-byte reductions: one per 8-column group of the
  // swapped sums (see quadPairRows) instead of two 8-byte ones.
  void reduceWide(OpBuilder &t, bool guarded) {
    QuadPairRows q = quadPairRows(t);
    for (int64_t j = 0; j < n / 8; ++j) {
      Value out = swapped(t, q, j);
      OpBuilder sb = t;
      if (guarded)
        sb = t.create<scf::IfOp>(loc, wideInBounds(t, q, j),
                                 /*withElseRegion=*/false)
                 .getThenBodyBuilder();
      // Each group's address is computed on its own (the form that was
      // measured as the default, bench/NOTES.md).
      Value col = sb.create<arith::AddIOp>(loc, q.colSel, i32(sb, loc, 8 * j));
      Value off = sb.create<arith::AddIOp>(loc, q.rowOff, ext(sb, col));
      Value addr = sb.create<LLVM::PtrToIntOp>(loc, sb.getI64Type(),
                                               ptrAt(sb, KernelOp::PtrD, off));
      std::string asmText = "red.global.add.v4.f32 [$0], {$1, $2, $3, $4};";
      SmallVector<Value> operands = {addr};
      for (int e = 0; e < 4; ++e)
        operands.push_back(
            sb.create<LLVM::ExtractElementOp>(loc, out, i32(sb, loc, e)));
      inlinePtx(sb, loc, asmText, "l,f,f,f,f,~{memory}", operands);
    }
  }

  // Quad-ordered B rows: one 16-byte reduction per 4 consecutive columns,
  // addressed from the row's first one plus an immediate (64 bytes per
  // group pair), with no shuffles.
  void reduceQuads(OpBuilder &t, bool guarded) {
    for (int i = 0; i < 2; ++i) {
      Value first = quadRowOffset(t, i);
      for (int64_t g = 0; g < n / 16; ++g) {
        OpBuilder sb = t;
        if (guarded)
          sb = t.create<scf::IfOp>(loc, quadInBounds(t, i, g),
                                   /*withElseRegion=*/false)
                   .getThenBodyBuilder();
        Value addr = sb.create<LLVM::PtrToIntOp>(
            loc, sb.getI64Type(), ptrAt(sb, KernelOp::PtrD, first));
        std::string asmText = "red.global.add.v4.f32 [$0+" +
                              std::to_string(64 * g) + "], {$1, $2, $3, $4};";
        Value out = quadOf(sb, i, g);
        SmallVector<Value> operands = {addr};
        for (int e = 0; e < 4; ++e)
          operands.push_back(
              sb.create<LLVM::ExtractElementOp>(loc, out, i32(sb, loc, e)));
        inlinePtx(sb, loc, asmText, "l,f,f,f,f,~{memory}", operands);
      }
    }
  }

  void reduce(OpBuilder &t, bool guarded) {
    if (quadB)
      return reduceQuads(t, guarded);
    if (k.redVectorWidth == 4)
      return reduceWide(t, guarded);
    for (int i = 0; i < 2; ++i)
      for (int64_t j = 0; j < n / 8; ++j) {
        OpBuilder sb = t;
        if (guarded)
          sb = t.create<scf::IfOp>(loc, inBounds(t, i, j),
                                   /*withElseRegion=*/false)
                   .getThenBodyBuilder();
        Value v = mine(sb, i, j);
        Value addr = sb.create<LLVM::PtrToIntOp>(
            loc, sb.getI64Type(),
            ptrAt(sb, KernelOp::PtrD, offsetOf(sb, i, j)));
        Value lo = sb.create<LLVM::ExtractElementOp>(loc, v, i32(sb, loc, 0));
        Value hi = sb.create<LLVM::ExtractElementOp>(loc, v, i32(sb, loc, 1));
        inlinePtx(sb, loc, "red.global.add.v2.f32 [$0], {$1, $2};",
                  "l,f,f,~{memory}", ValueRange{addr, lo, hi});
      }
  }

  EpilogueOp op;
  OpBuilder &b;
  Location loc;
  int64_t n;
  SumPairs sums;
  Fragment f;
  Value m, nDim, mBase, nBase, row0, col0, groupRows, interior;
  Type f32;
  /// False while the copy of an empty tile is built: c is stored to d as it
  /// was loaded, without the sums.
  bool addSums = true;
  /// Whether c and d are the same tensor (accumulate in place). Built once,
  /// where it is first asked for: every later use is nested below that
  /// point.
  Value sameCD;
};

void TileEpilogue::copyEmptyTile() {
  if (Value tb = tileBlocks(op.getSums())) {
    Value separateC = b.create<arith::XOrIOp>(
        loc, inPlaceCond(),
        b.create<arith::ConstantIntOp>(loc, b.getI1Type(), 1));
    auto empty = b.create<scf::IfOp>(
        loc,
        b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, tb,
                                i32(b, loc, 0)),
        /*withElseRegion=*/true);
    OpBuilder eb = empty.getThenBodyBuilder();
    auto copy = eb.create<scf::IfOp>(loc, separateC, /*withElseRegion=*/false);
    OpBuilder cb = copy.getThenBodyBuilder();
    auto full = cb.create<scf::IfOp>(loc, interior, /*withElseRegion=*/true);
    addSums = false;
    OpBuilder ct = full.getThenBodyBuilder();
    batched(ct, /*guarded=*/false);
    OpBuilder ce = full.getElseBodyBuilder();
    batched(ce, /*guarded=*/true);
    addSums = true;
    b.setInsertionPoint(empty.elseBlock()->getTerminator());
  }
}

LogicalResult TileEpilogue::lower(ConversionPatternRewriter &rewriter) {
  if (!k.inPlace)
    copyEmptyTile();
  // In place (c == d): each chunk is added to d by a vector reduction in L2
  // (red.global.add.v2.f32), so nothing of c is read into the SM and the
  // warps do not wait for it. Exactly one reduction reaches each element, so
  // d + sum is rounded once and the result is deterministic (subnormal values
  // may be flushed, which the register path does not do).
  //
  // With red_max_blocks = B > 0 only tiles of at most B blocks take this
  // path: on the H200 it made short tiles faster (their epilogue does not
  // wait for c any more) and long ones slower (bench/NOTES.md).
  bool needsBlocks = k.reduceMaxBlocks > 0 || k.inPlace;
  Value blocks = needsBlocks ? tileBlocks(op.getSums()) : Value();
  if (k.reduce && needsBlocks && !blocks) {
    // Left unlowered, which fails the conversion.
    op.emitOpError(k.inPlace ? "the in-place kernel"
                             : "the reduction epilogue's bound")
        << " needs the tile's block count, but the sums do not come from a "
           "block loop of dgemm-lower-to-kernel";
    return failure();
  }
  if (k.reduce) {
    // In-place kernel: c is d (the runtime launches it for nothing else)
    // and every tile with K blocks reduces; there is no register path. A
    // tile without K blocks leaves d (= c) alone.
    Value inPlace = k.inPlace
                        ? b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                                  blocks, i32(b, loc, 0))
                              .getResult()
                        : inPlaceCond();
    // 1 <= blocks <= B (blocks - 1 wraps for 0): a tile without K blocks
    // (an empty group) keeps the register path, which leaves d = c exact
    // where a reduction of 0 would flush subnormal values.
    if (blocks && !k.inPlace)
      inPlace = b.create<arith::AndIOp>(
          loc, inPlace,
          b.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::ult,
              b.create<arith::SubIOp>(loc, blocks, i32(b, loc, 1)),
              i32(b, loc, k.reduceMaxBlocks)));
    auto split = b.create<scf::IfOp>(loc, inPlace, /*withElseRegion=*/true);
    OpBuilder rb = split.getThenBodyBuilder();
    auto full = rb.create<scf::IfOp>(loc, interior, /*withElseRegion=*/true);
    OpBuilder t = full.getThenBodyBuilder();
    reduce(t, /*guarded=*/false);
    OpBuilder e = full.getElseBodyBuilder();
    reduce(e, /*guarded=*/true);
    if (k.inPlace) {
      rewriter.eraseOp(op);
      return success();
    }
    b.setInsertionPoint(split.elseBlock()->getTerminator());
  }
  auto full = b.create<scf::IfOp>(loc, interior, /*withElseRegion=*/true);
  OpBuilder t = full.getThenBodyBuilder();
  batched(t, /*guarded=*/false);
  OpBuilder e = full.getElseBodyBuilder();
  batched(e, /*guarded=*/true);
  rewriter.eraseOp(op);
  return success();
}

struct EpilogueLowering : KernelPattern<EpilogueOp> {
  using KernelPattern::KernelPattern;
  LogicalResult
  matchAndRewrite(EpilogueOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    prefetchTileC(k, op, op.getSums(), op.getGroup(), op.getMBlock(),
                  op.getNBlock());
    rewriter.setInsertionPoint(op);
    return TileEpilogue(*this, op, rewriter).lower(rewriter);
  }
};
} // namespace

void nvvm_lowering::populateEpiloguePatterns(KernelContext &k,
                                             RewritePatternSet &patterns) {
  patterns.add<EpilogueLowering>(k);
}
