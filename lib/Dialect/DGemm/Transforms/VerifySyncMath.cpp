//===- VerifySyncMath.cpp - The math role's stage and WGMMA rules -------===//
//
// The math role reads stages after their full wait, releases each once after
// its reads completed (and after a proxy fence when the producer refills it
// through TMA), and reads accumulators only after their WGMMA completed,
// along every path through its branches and loops.
//
//===----------------------------------------------------------------------===//

#include "VerifySync.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::verify_sync;

std::optional<SyncChecker::Pending>
SyncChecker::MathState::pendingOf(Value v) const {
  if (auto it = pendingAcc.find(v); it != pendingAcc.end())
    return it->second;
  if (auto it = pendingStage.find(v); it != pendingStage.end())
    return it->second;
  return std::nullopt;
}

bool SyncChecker::MathState::holds(Value v) const {
  return acquired.contains(v) && !released.contains(v);
}

/// Whether the producer refills stage buffers of `kind` through the async
/// proxy (TMA), which a generic read must be fenced against (one producer
/// walk per kind).
bool SyncChecker::asyncWriter(ResourceKind kind) {
  auto [it, fresh] = asyncWriters.try_emplace(kind, false);
  if (fresh)
    it->second =
        findAccess(ws.getProducer(), kind, [](const ResourceAccess &r) {
          return r.access == AccessKind::Write && r.proxy == Proxy::Async;
        }) != nullptr;
  return it->second;
}

/// Every stage read is preceded by the full wait; the stage is released
/// once, after its last read, after any asynchronous read of it completed
/// and, if it was read through the generic proxy while the producer
/// refills it through the async proxy, after a proxy fence; accumulators
/// are read only after their WGMMA completed; a stage acquired in a block
/// is released in it.
///
/// A nested region that is not a loop starts from its parent's state; a
/// stage it inherited counts as released after it only if every block of
/// the region released it. A loop body starts with the iter_args fed by
/// values in flight (an accumulator being written, an acquired stage) in
/// flight as the oldest groups, and must yield the same positions in
/// flight as the newest ones, each stage still acquired; the loop's
/// results are then in flight in the parent.
LogicalResult
SyncChecker::checkMathBlock(Block &block, MathState st,
                            ArrayRef<unsigned> carried,
                            llvm::SmallDenseSet<Value> *releasedOut,
                            DenseMap<Value, Operation *> *overwrittenOut) {
  llvm::SmallDenseSet<Value> inherited = st.acquired;
  for (Value s : st.released)
    inherited.erase(s);
  // A loop body must release (or hand on) the stages it is carried.
  llvm::SmallDenseSet<Value> carriedIn;
  if (!carried.empty()) {
    carriedIn = std::move(inherited);
    inherited.clear();
  }
  for (Operation &op : block)
    if (failed(checkMathOp(op, st)))
      return failure();
  // A block that carries nothing hands on only complete fragments: the next
  // iteration, or the parent, takes what it yields as complete.
  auto out =
      block.empty() ? scf::YieldOp() : dyn_cast<scf::YieldOp>(block.back());
  if (out && carried.empty())
    for (auto [pos, v] : llvm::enumerate(out.getOperands()))
      if (auto writer = st.pendingAcc.find(v); writer != st.pendingAcc.end())
        return hazard(out,
                      "yields value #" + Twine(pos) +
                          " while the WGMMA that writes it may still be in "
                          "flight, out of a region that does not carry it",
                      writer->second.op, "written asynchronously here");
  // Values a loop body hands to its next iteration still in flight.
  llvm::SmallDenseSet<Value> handedOn;
  if (!carried.empty() &&
      failed(checkIterationEnd(block, st, carried, handedOn)))
    return failure();
  for (Value stage : carriedIn)
    if (!st.released.contains(stage) && !handedOn.contains(stage))
      return block.getParentOp()->emitError(
          "a stage carried into the loop body is neither released nor "
          "carried on: the producer would wait forever");
  for (Value stage : st.acquired)
    if (!inherited.contains(stage) && !st.released.contains(stage) &&
        !handedOn.contains(stage))
      return block.getParentOp()->emitError(
          "a stage acquired in this block is never released: the producer "
          "would wait forever");
  if (releasedOut)
    for (Value stage : inherited)
      if (st.released.contains(stage))
        releasedOut->insert(stage);
  if (overwrittenOut)
    for (auto [v, by] : st.overwritten)
      overwrittenOut->try_emplace(v, by);
  return success();
}

/// One operation of the math role, in program order.
LogicalResult SyncChecker::checkMathOp(Operation &op, MathState &st) {
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    if (failed(checkLoop(loop, st)))
      return failure();
  } else if (op.getNumRegions() != 0) {
    if (failed(checkMathBranches(op, st)))
      return failure();
  }
  if (auto wait = dyn_cast<WaitOp>(op)) {
    if (wait.getBarrier() == BarrierKind::full) {
      if (failed(checkStagePhase(wait)))
        return failure();
      st.acquired.insert(key(wait.getStage()));
    }
    return success();
  }
  if (auto wait = dyn_cast<MmaWaitOp>(op)) {
    unsigned left = std::min<unsigned>(wait.getPending(), st.numGroups);
    unsigned done = st.numGroups - left; // groups [0, done) completed
    st.pendingStage.remove_if(
        [&](const auto &entry) { return entry.second.group < done; });
    for (auto it = st.pendingAcc.begin(); it != st.pendingAcc.end();) {
      auto cur = it++;
      if (cur->second.group < done)
        st.pendingAcc.erase(cur);
    }
    return success();
  }
  if (isa<ProxyFenceOp>(op)) {
    st.unfenced.clear();
    return success();
  }
  if (auto yield = dyn_cast<scf::YieldOp>(op))
    for (Value v : yield.getOperands())
      if (Operation *by = st.overwritten.lookup(v))
        return hazard(&op,
                      "hands on an accumulator whose registers a chained "
                      "WGMMA overwrote in place",
                      by, "overwritten here");
  if (auto arrive = dyn_cast<ArriveOp>(op))
    return arrive.getBarrier() == BarrierKind::empty ? checkRelease(arrive, st)
                                                     : success();
  return checkMathAccesses(op, st);
}

/// A region that is not a loop (a branch): each block starts from the
/// parent's state; a stage the parent holds counts as released after it only
/// if every block released it.
LogicalResult SyncChecker::checkMathBranches(Operation &op, MathState &st) {
  // Stages the parent holds that every block of the region releases.
  std::optional<llvm::SmallDenseSet<Value>> releasedInAll;
  // A region without a block (an scf.if without else) is a path that
  // releases nothing.
  if (llvm::any_of(op.getRegions(), [](Region &r) { return r.empty(); }))
    releasedInAll.emplace();
  // What any path overwrote in place is dead after the region.
  DenseMap<Value, Operation *> overwrittenIn;
  for (Region &region : op.getRegions())
    for (Block &nested : region) {
      MathState inner = st;
      llvm::SmallDenseSet<Value> rel;
      if (failed(checkMathBlock(nested, inner, {}, &rel, &overwrittenIn)))
        return failure();
      if (!releasedInAll) {
        releasedInAll = rel;
      } else {
        llvm::SmallDenseSet<Value> both;
        for (Value v : *releasedInAll)
          if (rel.contains(v))
            both.insert(v);
        *releasedInAll = std::move(both);
      }
    }
  for (auto [v, by] : overwrittenIn)
    st.overwritten.try_emplace(v, by);
  if (releasedInAll)
    for (Value v : *releasedInAll) {
      st.released.insert(v);
      st.pendingStage.remove_if(
          [&](const auto &entry) { return entry.first == v; });
    }
  // What every path completed is complete; what a path completed by
  // waiting (accumulators) is not known, so it stays pending, which
  // only makes later reads wait more.
  return success();
}

/// A release (the empty barrier's arrive) of a stage the role holds, whose
/// reads all completed and were fenced.
LogicalResult SyncChecker::checkRelease(ArriveOp arrive, MathState &st) {
  Operation &op = *arrive;
  Value stage = key(arrive.getStage());
  auto pending = st.pendingStage.find(stage);
  if (pending != st.pendingStage.end())
    return hazard(&op,
                  "releases a stage while an asynchronous read of it "
                  "may still be in flight",
                  pending->second.op,
                  "this read completes only at a dgemm.mma.wait that "
                  "leaves it no longer pending");
  if (Operation *reader = st.unfenced.lookup(stage))
    return hazard(&op,
                  "releases a stage to the producer's async-proxy (TMA) "
                  "writes while a generic-proxy read of it is not "
                  "fenced (no dgemm.proxy.fence in between)",
                  reader, "read through the generic proxy here");
  if (st.released.contains(stage))
    return op.emitError("releases a stage twice");
  if (!st.acquired.contains(stage))
    return op.emitError("releases a stage it never acquired (no "
                        "dgemm.wait on its full barrier before it)");
  st.released.insert(stage);
  return success();
}

/// The chained accumulator: an asynchronous read of a fragment is ordered
/// after the WGMMA still writing it with no wait (PTX orders the
/// accumulator accesses of consecutive WGMMAs of one shape, which the op
/// verifier requires of a chain), and an asynchronous write of a fragment
/// the operation did not define overwrites its registers in place, so
/// nothing may access it afterwards.
LogicalResult SyncChecker::checkChainedAccumulators(
    Operation &op, ArrayRef<ResourceAccess> accesses, MathState &st) {
  for (const ResourceAccess &a : accesses)
    if (a.kind == ResourceKind::Accumulator)
      if (Operation *by = st.overwritten.lookup(a.index))
        return hazard(&op,
                      "accesses an accumulator whose registers a chained "
                      "WGMMA overwrote in place",
                      by, "overwritten here");
  for (const ResourceAccess &a : accesses)
    if (a.kind == ResourceKind::Accumulator && a.access == AccessKind::Write &&
        a.proxy == Proxy::Async && a.index.getDefiningOp() != &op)
      st.overwritten[a.index] = &op;
  return success();
}

/// The stage and accumulator accesses an operation declares.
LogicalResult SyncChecker::checkMathAccesses(Operation &op, MathState &st) {
  SmallVector<ResourceAccess> accesses = accessesOf(&op);
  if (failed(checkChainedAccumulators(op, accesses, st)))
    return failure();
  unsigned group = st.numGroups;
  if (llvm::any_of(accesses, [](const ResourceAccess &a) {
        return a.proxy == Proxy::Async;
      }))
    ++st.numGroups;
  for (ResourceAccess a : accesses) {
    if (isStage(a.kind))
      a.index = key(a.index);
    if (isStage(a.kind) && a.access == AccessKind::Read) {
      if (!st.acquired.contains(a.index))
        return hazard(&op,
                      "reads the " + stringifyResourceKind(a.kind) +
                          " of a stage before waiting on its full barrier",
                      findAccess(ws.getProducer(), a.kind,
                                 [](const ResourceAccess &r) {
                                   return r.access == AccessKind::Write;
                                 }),
                      "the producer writes it here");
      if (st.released.contains(a.index))
        return op.emitError("reads the ")
               << stringifyResourceKind(a.kind)
               << " of a stage after releasing it to the producer";
      if (a.proxy == Proxy::Async)
        st.pendingStage[a.index] = {&op, group};
      else if (asyncWriter(a.kind))
        st.unfenced[a.index] = &op;
    }
    if (a.kind == ResourceKind::Accumulator) {
      if (a.access == AccessKind::Write && a.proxy == Proxy::Async)
        st.pendingAcc[a.index] = {&op, group};
      if (a.access == AccessKind::Read && a.proxy == Proxy::Generic) {
        auto writer = st.pendingAcc.find(a.index);
        if (writer != st.pendingAcc.end())
          return hazard(&op,
                        "reads an accumulator before the WGMMA that "
                        "writes it completed",
                        writer->second.op, "written asynchronously here");
      }
    }
  }
  return success();
}

/// The end of a loop body: the positions carried in flight are yielded in
/// flight (each stage still acquired) as the newest groups.
LogicalResult
SyncChecker::checkIterationEnd(Block &block, MathState &st,
                               ArrayRef<unsigned> carried,
                               llvm::SmallDenseSet<Value> &handedOn) {
  auto yield = cast<scf::YieldOp>(block.getTerminator());
  std::optional<unsigned> oldest;
  for (unsigned pos : carried) {
    Value v = key(yield.getOperand(pos));
    std::optional<Pending> p = st.pendingOf(v);
    if (!p && !st.holds(v))
      return yield.emitOpError("iter_arg #")
             << pos << " enters the loop in flight but is yielded "
             << "complete or released";
    if (p)
      oldest = oldest ? std::min(*oldest, p->group) : p->group;
    handedOn.insert(v);
  }
  for (auto [pos, v] : llvm::enumerate(yield.getOperands()))
    if (!llvm::is_contained(carried, pos) && st.pendingOf(key(v)))
      return hazard(yield,
                    "yields iter_arg #" + Twine(pos) +
                        " with an asynchronous access in flight, "
                        "but it enters the loop complete",
                    nullptr, "");
  // The next iteration numbers the carried groups from 0: no group
  // newer than the oldest carried one may be left out.
  // A fragment a chained WGMMA overwrote in place is not left behind: its
  // registers are the newer fragment's, and nothing may use it again.
  auto leftBehind = [&](const auto &pending, const char *msg) -> LogicalResult {
    for (auto &[v, p] : pending)
      if (!handedOn.contains(v) && !st.overwritten.count(v) &&
          p.group >= *oldest)
        return hazard(yield, msg, p.op, "issued here");
    return success();
  };
  if (oldest &&
      (failed(leftBehind(st.pendingStage,
                         "an asynchronous read issued after a "
                         "loop-carried one is still in flight at the end "
                         "of the iteration")) ||
       failed(leftBehind(st.pendingAcc,
                         "an accumulator written after a loop-carried one "
                         "is still being written at the end of the "
                         "iteration"))))
    return failure();
  return success();
}

/// A loop nested in the math role (see checkMathBlock).
LogicalResult SyncChecker::checkLoop(scf::ForOp loop, MathState &st) {
  SmallVector<unsigned> carried;
  SmallVector<std::tuple<unsigned, unsigned, Operation *>> byGroup;
  MathState body;
  for (auto [pos, init] : llvm::enumerate(loop.getInitArgs())) {
    Value v = key(init);
    std::optional<Pending> p = st.pendingOf(v);
    bool stageHeld = st.holds(v);
    if (!p && !stageHeld)
      continue;
    carried.push_back(pos);
    Value arg = loop.getRegionIterArgs()[pos];
    if (stageHeld) {
      body.acquired.insert(arg);
      if (Operation *reader = st.unfenced.lookup(v))
        body.unfenced[arg] = reader;
    }
    if (p)
      byGroup.push_back({p->group, pos, p->op});
  }
  llvm::sort(byGroup, [](const auto &x, const auto &y) {
    return std::get<0>(x) < std::get<0>(y);
  });
  DenseMap<unsigned, unsigned> renumber;
  for (auto &[gr, pos, op] : byGroup)
    renumber.try_emplace(gr, renumber.size());
  body.numGroups = renumber.size();
  body.overwritten = st.overwritten;
  for (auto &[gr, pos, op] : byGroup) {
    Value init = key(loop.getInitArgs()[pos]);
    Value arg = loop.getRegionIterArgs()[pos];
    if (st.pendingAcc.count(init))
      body.pendingAcc[arg] = {op, renumber[gr]};
    if (st.pendingStage.count(init))
      body.pendingStage[arg] = {op, renumber[gr]};
  }
  if (failed(checkMathBlock(*loop.getBody(), std::move(body), carried)))
    return failure();
  // The results take over: the init values are the loop's to release.
  unsigned base = st.numGroups;
  for (unsigned pos : carried) {
    Value init = key(loop.getInitArgs()[pos]);
    Value result = loop.getResult(pos);
    if (st.holds(init)) {
      st.released.insert(init);
      st.acquired.insert(result);
      if (Operation *reader = st.unfenced.lookup(init))
        st.unfenced[result] = reader;
    }
  }
  for (auto &[gr, pos, op] : byGroup) {
    Value init = key(loop.getInitArgs()[pos]);
    Value result = loop.getResult(pos);
    if (st.pendingAcc.erase(init))
      st.pendingAcc[result] = {op, base + renumber[gr]};
    if (st.pendingStage.count(init)) {
      st.pendingStage.remove_if(
          [&](const auto &entry) { return entry.first == init; });
      st.pendingStage[result] = {op, base + renumber[gr]};
    }
  }
  st.numGroups = base + renumber.size();
  return success();
}
