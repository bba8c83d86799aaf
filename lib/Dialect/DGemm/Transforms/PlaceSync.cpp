//===- PlaceSync.cpp - Derive synchronization from resource effects -------===//
//
// The kernel builder declares, per operation, which stage buffers, descriptor
// slots and accumulators it reads or writes and through which proxy. This
// pass turns those declarations into mbarrier waits/arrives, WGMMA waits and
// descriptor drains/fences. It never looks at op names, only at effects, so a
// new kernel kind gets its synchronization by declaring its effects.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::dgemm {
#define GEN_PASS_DEF_DGEMMPLACESYNC
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;

static SmallVector<ResourceAccess> accessesOf(Operation *op) {
  SmallVector<ResourceAccess> accesses;
  if (auto iface = dyn_cast<ResourceAccessOpInterface>(op))
    iface.getResourceAccesses(accesses);
  return accesses;
}

/// Whether `v`, which dominates the op right after `op` in its block, is
/// also available before `op`: unless it is defined in that block, it comes
/// from an enclosing one.
static bool definedBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  return !def || def->getBlock() != op->getBlock() || def->isBeforeInBlock(op);
}

static TmaOperand operandOfSlot(ResourceKind kind) {
  return kind == ResourceKind::DescSlotA ? TmaOperand::a : TmaOperand::b;
}

namespace {
/// skip_descriptor_drain (a race demonstration) in the configuration of the
/// kernel holding `op`.
static bool skipDescriptorDrain(Operation &op) {
  auto kernel = op.getParentOfType<KernelOp>();
  return kernel &&
         kernel.getConfig().hasUnsafe(UnsafeVariant::skip_descriptor_drain);
}

struct PlaceSyncPass : public mlir::dgemm::impl::DGemmPlaceSyncBase<PlaceSyncPass> {
  using Base::Base;

  /// For the warp_specialize being placed: releases after generic stage
  /// reads need a proxy fence.
  bool fenceGenericReads = false;

  /// Phase parity of a stage value: stages are produced by dgemm.stage.
  FailureOr<Value> phaseOf(Operation *user, Value stage) {
    if (auto st = stage.getDefiningOp<StageOp>())
      return st.getPhase();
    user->emitOpError("stage operand is not produced by dgemm.stage, so its "
                      "barrier phase is unknown");
    return failure();
  }

  /// Producer role: a stage is acquired (empty wait) and armed (full arrive
  /// with the bytes of every async write it receives in this block) once,
  /// before its first write; descriptor rewrites are drained and published.
  LogicalResult placeProducer(Block &block) {
    // Bytes each stage receives in this block, known before placing.
    llvm::MapVector<Value, int64_t> bytes;
    for (Operation &op : block)
      for (const ResourceAccess &a : accessesOf(&op))
        if (isStage(a.kind) && a.access == AccessKind::Write &&
            a.proxy == Proxy::Async)
          bytes[a.index] += a.bytes;

    llvm::SmallDenseSet<Value> armed;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          if (failed(placeProducer(nested)))
            return failure();
      for (const ResourceAccess &a : accessesOf(&op)) {
        OpBuilder b(&op);
        if (isStage(a.kind) && a.access == AccessKind::Write &&
            !armed.contains(a.index)) {
          FailureOr<Value> phase = phaseOf(&op, a.index);
          if (failed(phase))
            return failure();
          b.create<WaitOp>(op.getLoc(), BarrierKind::empty, a.index, *phase);
          b.create<ArriveOp>(op.getLoc(), BarrierKind::full, a.index,
                             b.getI64IntegerAttr(bytes[a.index]));
          armed.insert(a.index);
          ++numWaits;
          ++numArrives;
        }
        if (isDescSlot(a.kind) && a.access == AccessKind::Write &&
            a.proxy == Proxy::Generic) {
          auto update = dyn_cast<DescUpdateOp>(&op);
          if (!update)
            return op.emitOpError("writes a descriptor slot but does not say "
                                  "which pipeline iteration first uses it");
          if (!skipDescriptorDrain(op)) {
            b.create<DescDrainOp>(op.getLoc(), operandOfSlot(a.kind), a.index,
                                  update.getBeforeIteration());
            ++numDrains;
          }
          b.setInsertionPointAfter(&op);
          b.create<DescPublishOp>(op.getLoc(), operandOfSlot(a.kind), a.index);
        }
      }
    }
    return success();
  }

  /// What the math role has in flight at a point of a block: asynchronous
  /// effects not yet known complete, by the index of their WGMMA commit group
  /// (every operation with async effects is one group, in program order),
  /// and the stages acquired and not yet released, with the operation after
  /// which each is released (null while it is still being read).
  struct MathState {
    llvm::MapVector<Value, unsigned> pendingStages;
    DenseMap<Value, unsigned> pendingAccs;
    unsigned numGroups = 0;
    llvm::MapVector<Value, Operation *> releaseAfter;
    llvm::SmallDenseSet<Value> genericRead;
    /// Accumulators whose registers an asynchronous read-modify-write (a
    /// chained WGMMA) overwrote in place, with that operation.
    DenseMap<Value, Operation *> overwritten;

    /// The commit group of `v`'s async access still in flight, if any.
    std::optional<unsigned> groupOf(Value v) const {
      if (auto it = pendingAccs.find(v); it != pendingAccs.end())
        return it->second;
      if (auto it = pendingStages.find(v); it != pendingStages.end())
        return it->second;
      return std::nullopt;
    }
  };

  /// The chained accumulator (rule 3b, docs/Synchronization.md): a WGMMA
  /// that accumulates onto a fragment reads it asynchronously and
  /// overwrites its registers. Its read needs no wait, even while the
  /// previous WGMMA still writes the fragment: PTX orders the accumulator
  /// accesses of consecutive WGMMAs of one shape (the op verifier keeps the
  /// chain to one shape). But no wait can restore the fragment afterwards,
  /// so any later access of it is refused.
  static LogicalResult checkOverwritten(Operation &op,
                                        ArrayRef<ResourceAccess> accesses,
                                        const MathState &st) {
    for (const ResourceAccess &a : accesses) {
      if (a.kind != ResourceKind::Accumulator)
        continue;
      if (Operation *by = st.overwritten.lookup(a.index)) {
        InFlightDiagnostic diag =
            op.emitOpError("accesses an accumulator whose registers a "
                           "chained WGMMA overwrote in place; no wait can "
                           "order it");
        diag.attachNote(by->getLoc()) << "overwritten here";
        return diag;
      }
    }
    return success();
  }

  /// A loop iteration may not hand on a fragment it overwrote in place.
  static LogicalResult checkOverwrittenYield(scf::YieldOp yield,
                                             const MathState &st) {
    for (auto [pos, v] : llvm::enumerate(yield.getOperands()))
      if (Operation *by = st.overwritten.lookup(v)) {
        InFlightDiagnostic diag =
            yield.emitOpError("yields iter_arg #")
            << pos << ", an accumulator a chained WGMMA overwrote in place";
        diag.attachNote(by->getLoc()) << "overwritten here";
        return diag;
      }
    return success();
  }

  /// Math role: wait for a stage's full barrier before its first read; wait
  /// for WGMMA before a generic read of what it wrote; release the stage after
  /// its last read once no asynchronous read of it is pending, with a proxy
  /// fence first if the stage was read through the generic proxy (the
  /// producer refills it through the async proxy).
  ///
  /// A generic read of an accumulator waits only for the group that writes
  /// it (`wgmma.wait_group` with the later groups left pending), so groups
  /// issued after it keep the tensor cores busy meanwhile.
  ///
  /// Async effects may outlive a block in two ways. A nested region that is
  /// not a loop (scf.if) starts from its parent's state, so it completes and
  /// releases what its parent left in flight; at its end nothing it saw is in
  /// flight any more. A loop may carry an accumulator still being written,
  /// and its stage, from one iteration to the next (an iter_arg fed by a
  /// pending value): its body starts with them pending, as the oldest
  /// groups, and must end with the same positions pending again (and as the
  /// newest groups); its results are then pending in the parent.
  LogicalResult placeMath(Block &block, MathState st,
                          ArrayRef<unsigned> carried = {}) {
    bool inLoop = isa_and_nonnull<scf::ForOp>(block.getParentOp());
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto loop = dyn_cast<scf::ForOp>(&op)) {
        if (failed(placeLoop(loop, st)))
          return failure();
      } else if (op.getNumRegions() != 0) {
        // The region inherits what is in flight (and the stages it reads);
        // stages already read to the end stay the parent's to release. Only
        // an scf.if whose every path is a block can take that over.
        bool inFlight = !st.pendingStages.empty() || !st.pendingAccs.empty();
        if (inFlight &&
            (!isa<scf::IfOp>(op) || llvm::any_of(op.getRegions(), [](Region &r) {
              return r.empty();
            })))
          return op.emitOpError("is entered with WGMMA work in flight, which "
                                "only an scf.if with both branches (or an "
                                "scf.for iter_arg) can take over");
        MathState inherited;
        inherited.overwritten = st.overwritten;
        inherited.numGroups = st.numGroups;
        inherited.pendingAccs = st.pendingAccs;
        inherited.pendingStages = st.pendingStages;
        for (auto [s, gr] : st.pendingStages) {
          inherited.releaseAfter[s] = nullptr;
          if (st.genericRead.contains(s))
            inherited.genericRead.insert(s);
        }
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            if (failed(placeMath(nested, inherited)))
              return failure();
        // Each block completed and released what it inherited.
        for (auto [s, gr] : st.pendingStages)
          st.releaseAfter.erase(s);
        st.pendingStages.clear();
        st.pendingAccs.clear();
      }
      SmallVector<ResourceAccess> accesses = accessesOf(&op);
      // Waits until every group up to and including `group` completed.
      auto completeThrough = [&](OpBuilder &b, unsigned group) {
        Operation *wait = b.create<MmaWaitOp>(
            op.getLoc(), static_cast<uint32_t>(st.numGroups - 1 - group));
        llvm::MapVector<Value, unsigned> still;
        for (auto [s, gr] : st.pendingStages) {
          if (gr <= group)
            st.releaseAfter[s] = wait;
          else
            still[s] = gr;
        }
        st.pendingStages = std::move(still);
        for (auto it = st.pendingAccs.begin(); it != st.pendingAccs.end();) {
          auto cur = it++;
          if (cur->second <= group)
            st.pendingAccs.erase(cur);
        }
        ++numWaits;
      };
      if (failed(checkOverwritten(op, accesses, st)))
        return failure();
      bool async = false;
      for (const ResourceAccess &a : accesses) {
        OpBuilder b(&op);
        async |= a.proxy == Proxy::Async;
        if (isStage(a.kind) && a.access == AccessKind::Read &&
            !st.releaseAfter.count(a.index) &&
            !st.pendingStages.count(a.index)) {
          FailureOr<Value> phase = phaseOf(&op, a.index);
          if (failed(phase))
            return failure();
          b.create<WaitOp>(op.getLoc(), BarrierKind::full, a.index, *phase);
          st.releaseAfter[a.index] = nullptr;
          ++numWaits;
        }
        if (a.kind == ResourceKind::Accumulator &&
            a.access == AccessKind::Read && a.proxy == Proxy::Generic) {
          auto it = st.pendingAccs.find(a.index);
          if (it != st.pendingAccs.end())
            completeThrough(b, it->second);
        }
      }
      unsigned group = st.numGroups;
      if (async)
        ++st.numGroups;
      for (const ResourceAccess &a : accesses) {
        if (isStage(a.kind) && a.access == AccessKind::Read) {
          if (a.proxy == Proxy::Async) {
            st.pendingStages[a.index] = group;
          } else {
            st.genericRead.insert(a.index);
            st.releaseAfter[a.index] = &op;
          }
        }
        if (a.kind == ResourceKind::Accumulator &&
            a.access == AccessKind::Write && a.proxy == Proxy::Async) {
          st.pendingAccs[a.index] = group;
          if (a.index.getDefiningOp() != &op)
            st.overwritten[a.index] = &op;
        }
      }
    }

    // What this block hands on still in flight: for a loop body, the
    // carried iter_args; nothing otherwise.
    llvm::SmallDenseSet<Value> handedOn;
    auto yield = inLoop ? cast<scf::YieldOp>(block.getTerminator())
                        : scf::YieldOp();
    if (yield && failed(checkOverwrittenYield(yield, st)))
      return failure();
    // Without carried values the wait at the end of the body completes
    // every group before the yield, so a value written in it is yielded
    // complete (the chained accumulator of a block loop).
    if (yield && !carried.empty())
      for (auto [pos, v] : llvm::enumerate(yield.getOperands()))
        if (!llvm::is_contained(carried, pos) && st.groupOf(v))
          return yield.emitOpError("iter_arg #")
                 << pos << " is yielded with an asynchronous access in "
                 << "flight but enters the loop complete";
    if (yield && !carried.empty()) {
      unsigned oldest = st.numGroups;
      for (unsigned pos : carried) {
        Value v = yield.getOperand(pos);
        std::optional<unsigned> gr = st.groupOf(v);
        if (!gr)
          return yield.emitOpError("iter_arg #")
                 << pos << " enters the loop with an asynchronous write or "
                 << "read in flight but is yielded complete";
        oldest = std::min(oldest, *gr);
        handedOn.insert(v);
      }
      // Groups older than the carried ones complete here; the carried ones
      // must be the newest, so that the next iteration can count them.
      bool older = false;
      for (auto [v, gr] : st.pendingStages)
        if (!handedOn.contains(v)) {
          if (gr >= oldest)
            return yield.emitOpError("an asynchronous read issued after the "
                                     "oldest loop-carried one is still in "
                                     "flight at the end of the iteration");
          older = true;
        }
      // A fragment a chained WGMMA overwrote in place is not left behind:
      // its registers are the newer fragment's (checkOverwritten keeps it
      // unused).
      for (auto [v, gr] : st.pendingAccs)
        if (!handedOn.contains(v) && !st.overwritten.count(v) && gr >= oldest)
          return yield.emitOpError("an accumulator written after the oldest "
                                   "loop-carried one is still in flight at "
                                   "the end of the iteration");
      if (older) {
        OpBuilder b(yield);
        unsigned keep = st.numGroups - oldest;
        Operation *wait = b.create<MmaWaitOp>(yield.getLoc(), keep);
        for (auto [s, gr] : st.pendingStages)
          if (!handedOn.contains(s))
            st.releaseAfter[s] = wait;
        ++numWaits;
      }
      for (Value v : handedOn)
        st.releaseAfter.erase(v);
    } else if (!st.pendingStages.empty() || !st.pendingAccs.empty()) {
      // Asynchronous accesses still pending at the end of the block
      // complete before the release.
      OpBuilder b(block.getParentOp()->getContext());
      if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
        b.setInsertionPoint(&block.back());
      else
        b.setInsertionPointToEnd(&block);
      auto out = block.empty() ? scf::YieldOp()
                               : dyn_cast<scf::YieldOp>(block.back());
      if (out && !inLoop)
        for (Value v : out.getOperands())
          if (st.groupOf(v))
            return out.emitOpError("yields a value with an asynchronous "
                                     "access in flight out of a region that "
                                     "is not a loop iteration");
      Operation *wait = b.create<MmaWaitOp>(block.getParentOp()->getLoc(), 0u);
      for (auto [s, gr] : st.pendingStages)
        st.releaseAfter[s] = wait;
      ++numWaits;
    }
    for (auto [stage, after] : st.releaseAfter) {
      if (!after)
        return block.getParentOp()->emitError(
            "a stage acquired here is neither released nor carried on");
      OpBuilder b(after->getContext());
      b.setInsertionPointAfter(after);
      if (fenceGenericReads && st.genericRead.contains(stage)) {
        b.create<ProxyFenceOp>(after->getLoc());
        ++numFences;
      }
      b.create<ArriveOp>(after->getLoc(), BarrierKind::empty, stage,
                         IntegerAttr());
      ++numArrives;
    }
    return success();
  }

  /// A loop nested in the math role: the iter_args fed by values with an
  /// async access in flight are carried pending through its body and come
  /// out pending in its results.
  LogicalResult placeLoop(scf::ForOp loop, MathState &st) {
    SmallVector<unsigned> carried;
    SmallVector<std::pair<unsigned, unsigned>> byGroup; // (group, position)
    for (auto [pos, v] : llvm::enumerate(loop.getInitArgs())) {
      if (std::optional<unsigned> gr = st.groupOf(v)) {
        carried.push_back(pos);
        byGroup.push_back({*gr, pos});
      }
    }
    // Renumber the carried groups 0, 1, ... in their order.
    llvm::sort(byGroup);
    DenseMap<unsigned, unsigned> renumber;
    for (auto [gr, pos] : byGroup)
      renumber.try_emplace(gr, renumber.size());
    MathState body;
    body.overwritten = st.overwritten;
    body.numGroups = renumber.size();
    for (auto [gr, pos] : byGroup) {
      Value init = loop.getInitArgs()[pos];
      Value arg = loop.getRegionIterArgs()[pos];
      if (st.pendingAccs.count(init))
        body.pendingAccs[arg] = renumber[gr];
      if (st.pendingStages.count(init)) {
        body.pendingStages[arg] = renumber[gr];
        if (st.genericRead.contains(init))
          body.genericRead.insert(arg);
      }
    }
    if (failed(placeMath(*loop.getBody(), std::move(body), carried)))
      return failure();
    // The loop (or, with no iteration, its results) takes over the carried
    // values: they come out pending, as the newest groups.
    unsigned base = st.numGroups;
    for (auto [gr, pos] : byGroup) {
      Value init = loop.getInitArgs()[pos];
      Value result = loop.getResult(pos);
      if (st.pendingAccs.erase(init))
        st.pendingAccs[result] = base + renumber[gr];
      if (st.pendingStages.count(init)) {
        st.pendingStages.erase(init);
        st.pendingStages[result] = base + renumber[gr];
        st.releaseAfter.erase(init);
        if (st.genericRead.contains(init))
          st.genericRead.insert(result);
      }
    }
    st.numGroups = base + renumber.size();
    return success();
  }

  /// Park slots: one role writes a slot, another reads it, both through the
  /// generic proxy, so the pair of barriers is the whole protocol. In each
  /// block, the writer waits for the slot's park_empty barrier before its
  /// first write and arrives on park_full after its last; the reader waits
  /// on park_full before its first read and arrives on park_empty after its
  /// last. Every thread of a role arrives (mbarrier.arrive releases the
  /// thread's own accesses), so the counts are the roles' threads.
  LogicalResult placePark(WarpSpecializeOp ws) {
    Region *writer = nullptr, *reader = nullptr;
    Operation *firstWrite = nullptr, *firstRead = nullptr;
    std::function<LogicalResult(Region &, Block &)> place =
        [&](Region &role, Block &block) -> LogicalResult {
      // Per slot: the first and last access in this block, and their kind.
      llvm::MapVector<Value, std::pair<Operation *, Operation *>> span;
      DenseMap<Value, AccessKind> kindOf;
      for (Operation &op : block) {
        for (Region &region : op.getRegions())
          for (Block &nested : region)
            if (failed(place(role, nested)))
              return failure();
        for (const ResourceAccess &a : accessesOf(&op)) {
          if (a.kind != ResourceKind::Park)
            continue;
          if (a.proxy != Proxy::Generic)
            return op.emitOpError("accesses a park slot asynchronously; the "
                                  "park's barriers order generic accesses "
                                  "only");
          Region *&side = a.access == AccessKind::Write ? writer : reader;
          Operation *&first =
              a.access == AccessKind::Write ? firstWrite : firstRead;
          if (side && side != &role)
            return op.emitOpError("is a second role that ")
                   << (a.access == AccessKind::Write ? "writes" : "reads")
                   << " the park: one role writes it, another reads it";
          side = &role;
          if (!first)
            first = &op;
          auto [it, fresh] = kindOf.try_emplace(a.index, a.access);
          if (!fresh && it->second != a.access)
            return op.emitOpError("both writes and reads a park slot in one "
                                  "block: the park hands a tile from one "
                                  "role to another");
          auto &sp = span[a.index];
          if (!sp.first)
            sp.first = &op;
          sp.second = &op;
        }
      }
      for (auto [slot, sp] : span) {
        FailureOr<Value> phase = phaseOf(sp.first, slot);
        if (failed(phase))
          return failure();
        bool writes = kindOf[slot] == AccessKind::Write;
        if (!definedBefore(slot, sp.first) ||
            !definedBefore(*phase, sp.first))
          return sp.first->emitOpError(
              "uses a park slot defined after it in its block");
        OpBuilder b(sp.first);
        b.create<WaitOp>(sp.first->getLoc(),
                         writes ? BarrierKind::park_empty
                                : BarrierKind::park_full,
                         slot, *phase);
        b.setInsertionPointAfter(sp.second);
        b.create<ArriveOp>(sp.second->getLoc(),
                           writes ? BarrierKind::park_full
                                  : BarrierKind::park_empty,
                           slot, IntegerAttr());
        ++numWaits;
        ++numArrives;
      }
      return success();
    };
    for (Region *role : {&ws.getProducer(), &ws.getMath(), &ws.getWorkers()})
      for (Block &block : *role)
        if (failed(place(*role, block)))
          return failure();
    if (!writer && !reader)
      return success();
    if (!writer || !reader)
      return (writer ? firstWrite : firstRead)
          ->emitOpError(writer ? "writes the park, but no role reads it: the "
                                 "writer would wait forever"
                               : "reads the park, but no role writes it: the "
                                 "reader would wait forever");
    Builder b(ws.getContext());
    ws.setParkFullArrivalsAttr(
        b.getI32IntegerAttr(ws.getRoleThreads(*writer)));
    ws.setParkEmptyArrivalsAttr(
        b.getI32IntegerAttr(ws.getRoleThreads(*reader)));
    return success();
  }

  /// Whether the producer role writes stages through the async proxy (TMA),
  /// so that generic reads of a stage must be fenced before its release.
  static bool refilledAsynchronously(WarpSpecializeOp ws) {
    bool async = false;
    ws.getProducer().walk([&](Operation *op) {
      for (const ResourceAccess &a : accessesOf(op))
        async |= isStage(a.kind) && a.access == AccessKind::Write &&
                 a.proxy == Proxy::Async;
    });
    return async;
  }

  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](WarpSpecializeOp ws) {
      // Placing again would double every barrier operation.
      if (ws.getFullArrivalsAttr() || ws.getEmptyArrivalsAttr()) {
        ws.emitOpError("is already synchronized (it has barrier arrival "
                       "counts): dgemm-place-sync runs once");
        return WalkResult::interrupt();
      }
      ConfigAttr config = ws->getParentOfType<KernelOp>().getConfig();
      fenceGenericReads =
          !config.hasUnsafe(UnsafeVariant::skip_proxy_fence) &&
          refilledAsynchronously(ws);
      if (failed(placeProducer(ws.getProducer().front())) ||
          failed(placeMath(ws.getMath().front(), MathState())) ||
          failed(placePark(ws)))
        return WalkResult::interrupt();
      // The producer role is one thread: one arrive completes a full phase
      // (the TMA bytes do the rest). A math role's release is one arrive per
      // warp, after a warp-wide sync (see convert-dgemm-to-nvvm).
      auto kernel = ws->getParentOfType<KernelOp>();
      Builder b(ws.getContext());
      ws.setFullArrivalsAttr(b.getI32IntegerAttr(1));
      ws.setEmptyArrivalsAttr(b.getI32IntegerAttr(
          4 * kernel.getConfig().getMathWarpgroups()));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
