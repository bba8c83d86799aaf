//===- VerifySync.cpp - Reject schedules with unordered hazards -----------===//
//
// An independent check of a kernel's synchronization against the resource
// effects its operations declare. It shares no code with dgemm-place-sync
// beyond the effect declarations, so a mistake in one is caught by the other;
// hand-written schedules (such as DeepGEMM 2.6.1's) are checked the same way.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::dgemm {
#define GEN_PASS_DEF_DGEMMVERIFYSYNC
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;

namespace {

SmallVector<ResourceAccess> accessesOf(Operation *op) {
  SmallVector<ResourceAccess> accesses;
  if (auto iface = dyn_cast<ResourceAccessOpInterface>(op))
    iface.getResourceAccesses(accesses);
  return accesses;
}

TmaOperand operandOfSlot(ResourceKind kind) {
  return kind == ResourceKind::DescSlotA ? TmaOperand::a : TmaOperand::b;
}

/// The first operation in `region` that accesses `kind` the way `pred`
/// wants: the other side of a hazard, for the diagnostic's note.
Operation *findAccess(Region &region, ResourceKind kind,
                      llvm::function_ref<bool(const ResourceAccess &)> pred) {
  Operation *found = nullptr;
  region.walk([&](Operation *op) {
    for (const ResourceAccess &a : accessesOf(op))
      if (a.kind == kind && pred(a)) {
        found = op;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return found;
}

class Checker {
public:
  explicit Checker(WarpSpecializeOp ws) : ws(ws) {}

  LogicalResult run() {
    if (failed(checkProducerBlock(ws.getProducer().front())) ||
        failed(checkDescriptors()) ||
        failed(checkMathBlock(ws.getMath().front(), MathState())) ||
        failed(checkPark()))
      return failure();
    return success();
  }

private:
  /// The park: one role writes a slot and another reads it, through the
  /// generic proxy, once per iteration of the same tile loop. In each role,
  /// every park operation (access, wait, arrive) sits directly in the body of
  /// the role's top-level loop, which holds one hand-over: the wait (the
  /// writer's on park_empty, the reader's on park_full, with the phase of the
  /// slot's dgemm.stage), the accesses, then the arrive on the other barrier
  /// of the pair. The slot counts the loop's iterations (an iter_arg from 0
  /// stepping by 1, or (iv - lower bound) / step), the two loops walk the
  /// same range, and the recorded arrival counts are the two roles' threads.
  /// So the k-th wait of either role is for the k-th phase the other
  /// completes.
  LogicalResult checkPark() {
    struct Side {
      Region *role = nullptr;
      scf::ForOp loop;
      Operation *access = nullptr;
    };
    Side writer, reader;
    auto isParkBarrier = [](BarrierKind k) {
      return k == BarrierKind::park_full || k == BarrierKind::park_empty;
    };
    auto parkAccess = [](Operation *op) -> std::optional<ResourceAccess> {
      for (const ResourceAccess &a : accessesOf(op))
        if (a.kind == ResourceKind::Park)
          return a;
      return std::nullopt;
    };
    for (Region *role : {&ws.getProducer(), &ws.getMath(), &ws.getWorkers()}) {
      SmallVector<Operation *> parkOps;
      role->walk([&](Operation *op) {
        auto wait = dyn_cast<WaitOp>(op);
        auto arrive = dyn_cast<ArriveOp>(op);
        if ((wait && isParkBarrier(wait.getBarrier())) ||
            (arrive && isParkBarrier(arrive.getBarrier())) || parkAccess(op))
          parkOps.push_back(op);
      });
      if (parkOps.empty())
        continue;
      // Which side this role is: its accesses say.
      std::optional<ResourceAccess> first;
      for (Operation *op : parkOps)
        if ((first = parkAccess(op)))
          break;
      if (!first)
        return parkOps.front()->emitError(
            "synchronizes on the park in a role that never accesses it");
      bool writes = first->access == AccessKind::Write;
      Side &side = writes ? writer : reader;
      if (side.role)
        return parkOps.front()->emitError("is a second role that ")
               << (writes ? "writes" : "reads") << " the park";
      side.role = role;
      for (Operation *op : parkOps) {
        auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
        if (!loop || loop->getParentRegion() != role)
          return op->emitError("uses the park outside the body of its role's "
                               "top-level loop: the two roles could pass "
                               "through the park a different number of times");
        if (side.loop && loop != side.loop)
          return op->emitError("uses the park in a second loop of its role");
        side.loop = loop;
      }
      BarrierKind waitKind =
          writes ? BarrierKind::park_empty : BarrierKind::park_full;
      BarrierKind arriveKind =
          writes ? BarrierKind::park_full : BarrierKind::park_empty;
      // One hand-over per iteration, in program order.
      enum { Idle, Held, Released } state = Idle;
      WaitOp held;
      ArriveOp release;
      Operation *lastAccess = nullptr;
      Value slot;
      for (Operation &op : *side.loop.getBody()) {
        if (auto wait = dyn_cast<WaitOp>(op);
            wait && isParkBarrier(wait.getBarrier())) {
          if (wait.getBarrier() != waitKind)
            return wait.emitError("waits on ")
                   << stringifyBarrierKind(wait.getBarrier()) << " in the role "
                   << "that " << (writes ? "writes" : "reads")
                   << " the park, which waits on "
                   << stringifyBarrierKind(waitKind);
          if (state != Idle)
            return hazard(wait,
                          "passes through the park twice in one iteration "
                          "of the tile loop",
                          held, "first acquired here");
          if (failed(checkParkSlot(wait, wait.getStage(), side.loop)))
            return failure();
          auto stage = wait.getStage().getDefiningOp<StageOp>();
          if (wait.getPhase() != stage.getPhase())
            return wait.emitError("waits on a park barrier with a phase that "
                                  "is not its slot's (the phase result of "
                                  "the dgemm.stage that gives the slot)");
          state = Held;
          held = wait;
          slot = wait.getStage();
          continue;
        }
        if (auto arrive = dyn_cast<ArriveOp>(op);
            arrive && isParkBarrier(arrive.getBarrier())) {
          if (arrive.getBarrier() != arriveKind)
            return arrive.emitError("arrives on ")
                   << stringifyBarrierKind(arrive.getBarrier())
                   << " in the role that " << (writes ? "writes" : "reads")
                   << " the park, which arrives on "
                   << stringifyBarrierKind(arriveKind);
          if (state != Held || arrive.getStage() != slot)
            return arrive.emitError("arrives on a park barrier without "
                                    "holding the slot (no matching wait "
                                    "before it in the iteration)");
          if (!lastAccess)
            return hazard(arrive,
                          "hands the park over without accessing it after "
                          "the wait",
                          held, "acquired here");
          state = Released;
          release = arrive;
          continue;
        }
        std::optional<ResourceAccess> a = parkAccess(&op);
        if (!a)
          continue;
        if (a->proxy != Proxy::Generic)
          return op.emitError("accesses a park slot asynchronously: its "
                              "barriers order generic accesses only");
        if ((a->access == AccessKind::Write) != writes)
          return op.emitError("both writes and reads the park in one role");
        if (state == Idle || a->index != slot)
          return hazard(&op,
                        writes ? "writes a park slot before waiting on its "
                                 "park_empty barrier"
                               : "reads a park slot before waiting on its "
                                 "park_full barrier",
                        nullptr, "");
        if (state == Released)
          return hazard(&op,
                        Twine(writes ? "writes" : "reads") +
                            " a park slot after releasing it",
                        release, "released here");
        lastAccess = &op;
        side.access = &op;
      }
      if (state == Held)
        return held.emitError("acquires a park slot that its iteration never "
                              "releases: the other role would wait forever");
    }
    if (!writer.role && !reader.role)
      return success();
    if (!writer.role || !reader.role)
      return (writer.role ? writer.access : reader.access)
          ->emitError(writer.role ? "writes the park, but no role reads it"
                                  : "reads the park, but no role writes it");
    auto counts = [&](std::optional<uint32_t> got, Region &role,
                      const char *name) -> LogicalResult {
      int64_t threads = ws.getRoleThreads(role);
      if (!got || int64_t(*got) != threads)
        return ws.emitError(name)
               << " is " << (got ? int64_t(*got) : int64_t(0))
               << " but the role that arrives on it has " << threads
               << " threads";
      return success();
    };
    if (failed(counts(ws.getParkFullArrivals(), *writer.role,
                      "park_full_arrivals")) ||
        failed(counts(ws.getParkEmptyArrivals(), *reader.role,
                      "park_empty_arrivals")))
      return failure();
    scf::ForOp w = writer.loop, r = reader.loop;
    if (!sameValue(w.getLowerBound(), r.getLowerBound()) ||
        !sameValue(w.getUpperBound(), r.getUpperBound()) ||
        !sameValue(w.getStep(), r.getStep()))
      return hazard(reader.access,
                    "accesses the park in a loop whose bounds differ from "
                    "those of the loop that writes it",
                    writer.access, "written here");
    return success();
  }

  /// The park's slot must be dgemm.stage of 1 stage whose iteration counts
  /// the iterations of `loop`: an iter_arg that starts at 0 and is yielded
  /// plus 1, or (induction variable - lower bound) / step.
  LogicalResult checkParkSlot(Operation *user, Value slot, scf::ForOp loop) {
    auto stage = slot.getDefiningOp<StageOp>();
    if (!stage || stage.getStages() != 1)
      return user->emitError("uses a park slot that is not a dgemm.stage of "
                             "1 stage");
    Value it = stage.getIteration();
    auto isConst = [](Value v, int64_t c) {
      APInt value;
      return matchPattern(v, m_ConstantInt(&value)) && value == c;
    };
    if (auto arg = dyn_cast<BlockArgument>(it);
        arg && arg.getOwner() == loop.getBody() && arg.getArgNumber() > 0) {
      unsigned pos = arg.getArgNumber() - 1;
      auto next = loop.getBody()
                      ->getTerminator()
                      ->getOperand(pos)
                      .getDefiningOp<arith::AddIOp>();
      if (isConst(loop.getInitArgs()[pos], 0) && next &&
          ((next.getLhs() == arg && isConst(next.getRhs(), 1)) ||
           (next.getRhs() == arg && isConst(next.getLhs(), 1))))
        return success();
    }
    if (auto div = it.getDefiningOp<arith::DivUIOp>())
      if (auto sub = div.getLhs().getDefiningOp<arith::SubIOp>())
        if (sub.getLhs() == loop.getInductionVar() &&
            sameValue(sub.getRhs(), loop.getLowerBound()) &&
            sameValue(div.getRhs(), loop.getStep()))
          return success();
    return user->emitError("uses a park slot whose dgemm.stage does not "
                           "count the iterations of the tile loop (an "
                           "iter_arg from 0 stepping by 1, or (iv - lower "
                           "bound) / step): its phases would not pair with "
                           "the other role's");
  }

  /// Whether `a` and `b` are computed alike: the same value, the same
  /// argument of the kernel, or the same arith operation, CTA index or grid
  /// size on operands computed alike (values of different roles' regions;
  /// only operations whose result is the same in every thread of the CTA).
  static bool sameValue(Value a, Value b, int depth = 0) {
    if (a == b)
      return true;
    if (depth > 32 || a.getType() != b.getType())
      return false;
    auto argA = dyn_cast<BlockArgument>(a), argB = dyn_cast<BlockArgument>(b);
    if (argA || argB)
      return argA && argB && argA.getOwner() == argB.getOwner() &&
             isa<KernelOp>(argA.getOwner()->getParentOp()) &&
             argA.getArgNumber() == argB.getArgNumber();
    Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
    bool uniform = isa<NVVM::BlockIdXOp, NVVM::GridDimXOp>(x) ||
                   (isa<arith::ArithDialect>(x->getDialect()) &&
                    isMemoryEffectFree(x));
    if (!uniform || x->getName() != y->getName() ||
        x->getAttrDictionary() != y->getAttrDictionary() ||
        x->getNumOperands() != y->getNumOperands() ||
        x->getNumRegions() != 0 ||
        cast<OpResult>(a).getResultNumber() !=
            cast<OpResult>(b).getResultNumber())
      return false;
    for (auto [u, v] : llvm::zip(x->getOperands(), y->getOperands()))
      if (!sameValue(u, v, depth + 1))
        return false;
    return true;
  }

  InFlightDiagnostic hazard(Operation *op, const Twine &msg, Operation *other,
                            const Twine &otherMsg) {
    InFlightDiagnostic diag = op->emitError(msg);
    if (other)
      diag.attachNote(other->getLoc()) << otherMsg << " ('"
                                       << other->getName() << "')";
    return diag;
  }

  /// A stage barrier's wait must use the phase of the stage's own
  /// dgemm.stage: both roles derive stage and phase from the same pipeline
  /// iteration, so any other parity would wait for the wrong pass over the
  /// ring (or not at all).
  LogicalResult checkStagePhase(WaitOp wait) {
    auto stage = wait.getStage().getDefiningOp<StageOp>();
    if (!stage || wait.getPhase() != stage.getPhase())
      return wait.emitError("waits on a stage's ")
             << stringifyBarrierKind(wait.getBarrier())
             << " barrier with a phase that is not the stage's (the phase "
                "result of the dgemm.stage that gives the stage)";
    return success();
  }

  /// Every async stage write is preceded in its block by the stage's empty
  /// wait, and the block arms the stage's full barrier with exactly the bytes
  /// written.
  LogicalResult checkProducerBlock(Block &block) {
    llvm::SmallDenseSet<Value> acquired;
    llvm::MapVector<Value, ArriveOp> armed;
    llvm::MapVector<Value, std::pair<int64_t, Operation *>> written;
    for (Operation &op : block) {
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          if (failed(checkProducerBlock(nested)))
            return failure();
      if (auto wait = dyn_cast<WaitOp>(op)) {
        if (wait.getBarrier() == BarrierKind::empty) {
          if (failed(checkStagePhase(wait)))
            return failure();
          acquired.insert(wait.getStage());
        }
        continue;
      }
      if (auto arrive = dyn_cast<ArriveOp>(op)) {
        if (arrive.getBarrier() == BarrierKind::full)
          armed[arrive.getStage()] = arrive;
        continue;
      }
      for (const ResourceAccess &a : accessesOf(&op)) {
        if (!isStage(a.kind) || a.access != AccessKind::Write)
          continue;
        if (!acquired.contains(a.index))
          return hazard(&op,
                        "writes the " + stringifyResourceKind(a.kind) +
                            " of a stage before waiting on its empty barrier",
                        findAccess(ws.getMath(), a.kind,
                                   [](const ResourceAccess &r) {
                                     return r.access == AccessKind::Read;
                                   }),
                        "the math role may still be reading it here");
        auto &w = written[a.index];
        w.first += a.bytes;
        w.second = &op;
      }
    }
    for (auto [stage, w] : written) {
      auto it = armed.find(stage);
      if (it == armed.end())
        return w.second->emitError("loads into a stage whose full barrier is "
                                   "never armed: the math role would wait "
                                   "forever");
      std::optional<uint64_t> tx = it->second.getTxBytes();
      if (!tx || static_cast<int64_t>(*tx) != w.first)
        return hazard(it->second,
                      "arms the full barrier with " +
                          Twine(tx ? static_cast<int64_t>(*tx) : 0) +
                          " bytes but the stage receives " + Twine(w.first),
                      w.second, "last load into the stage");
    }
    return success();
  }

  /// Descriptor slots: a rewrite must directly follow a drain of the same
  /// slot, and no load may read a rewritten slot before it is published. The
  /// walk is in program order over the whole role, so loads from earlier
  /// iterations count as possibly in flight.
  LogicalResult checkDescriptors() {
    DenseMap<ResourceKind, Operation *> unpublished;
    WalkResult result = ws.getProducer().walk([&](Operation *op) {
      if (auto publish = dyn_cast<DescPublishOp>(op)) {
        ResourceKind kind = publish.getOperand() == TmaOperand::a
                                ? ResourceKind::DescSlotA
                                : ResourceKind::DescSlotB;
        unpublished.erase(kind);
        return WalkResult::advance();
      }
      for (const ResourceAccess &a : accessesOf(op)) {
        if (!isDescSlot(a.kind))
          continue;
        if (a.access == AccessKind::Read) {
          if (Operation *w = unpublished.lookup(a.kind)) {
            hazard(op,
                   "reads the " + stringifyResourceKind(a.kind) +
                       " through the tensormap proxy before the rewrite is "
                       "published (fence.proxy.tensormap release/acquire)",
                   w, "rewritten here by the generic proxy");
            return WalkResult::interrupt();
          }
          continue;
        }
        // A generic write: it must be guarded by a drain of the same slot.
        Operation *prev = op->getPrevNode();
        while (prev && isa<DescDrainOp, DescUpdateOp, DescPublishOp>(prev)) {
          auto drain = dyn_cast<DescDrainOp>(prev);
          if (drain && drain.getOperand() == operandOfSlot(a.kind) &&
              drain.getSlot() == a.index)
            break;
          prev = prev->getPrevNode();
        }
        if (!prev || !isa<DescDrainOp>(prev)) {
          Operation *reader = findAccess(
              ws.getProducer(), a.kind, [](const ResourceAccess &r) {
                return r.access == AccessKind::Read;
              });
          hazard(op,
                 "rewrites the " + stringifyResourceKind(a.kind) +
                     " while TMA loads issued with its previous contents may "
                     "still read it (no dgemm.desc.drain of this slot first)",
                 reader, "this load reads the slot asynchronously");
          return WalkResult::interrupt();
        }
        unpublished[a.kind] = op;
      }
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// Whether the producer refills stage buffers of `kind` through the async
  /// proxy (TMA), which a generic read must be fenced against (one producer
  /// walk per kind).
  bool asyncWriter(ResourceKind kind) {
    auto [it, fresh] = asyncWriters.try_emplace(kind, false);
    if (fresh)
      it->second = findAccess(ws.getProducer(), kind,
                              [](const ResourceAccess &r) {
                                return r.access == AccessKind::Write &&
                                       r.proxy == Proxy::Async;
                              }) != nullptr;
    return it->second;
  }

  /// Asynchronous effects not yet known complete, with the index of their
  /// WGMMA commit group (each operation with async effects is one group);
  /// dgemm.mma.wait with `pending` = p completes all but the last p groups.
  struct Pending {
    Operation *op;
    unsigned group;
  };
  /// The math role's state at a point of a block.
  struct MathState {
    llvm::SmallDenseSet<Value> acquired, released;
    llvm::MapVector<Value, Operation *> unfenced;
    llvm::MapVector<Value, Pending> pendingStage;
    DenseMap<Value, Pending> pendingAcc;
    unsigned numGroups = 0;

    /// `v`'s async access still in flight, if any.
    std::optional<Pending> pendingOf(Value v) const {
      if (auto it = pendingAcc.find(v); it != pendingAcc.end())
        return it->second;
      if (auto it = pendingStage.find(v); it != pendingStage.end())
        return it->second;
      return std::nullopt;
    }
    /// Whether stage `v` is acquired and not released.
    bool holds(Value v) const {
      return acquired.contains(v) && !released.contains(v);
    }
  };

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
  LogicalResult checkMathBlock(Block &block, MathState st,
                               ArrayRef<unsigned> carried = {},
                               llvm::SmallDenseSet<Value> *releasedOut =
                                   nullptr) {
    llvm::SmallDenseSet<Value> inherited = st.acquired;
    for (Value s : st.released)
      inherited.erase(s);
    // A loop body must release (or hand on) the stages it is carried.
    llvm::SmallDenseSet<Value> carriedIn;
    if (!carried.empty()) {
      carriedIn = std::move(inherited);
      inherited.clear();
    }
    for (Operation &op : block) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        if (failed(checkLoop(loop, st)))
          return failure();
      } else if (op.getNumRegions() != 0) {
        // Stages the parent holds that every block of the region releases.
        std::optional<llvm::SmallDenseSet<Value>> releasedInAll;
        // A region without a block (an scf.if without else) is a path that
        // releases nothing.
        if (llvm::any_of(op.getRegions(),
                         [](Region &r) { return r.empty(); }))
          releasedInAll.emplace();
        for (Region &region : op.getRegions())
          for (Block &nested : region) {
            MathState inner = st;
            llvm::SmallDenseSet<Value> rel;
            if (failed(checkMathBlock(nested, inner, {}, &rel)))
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
        if (releasedInAll)
          for (Value v : *releasedInAll) {
            st.released.insert(v);
            st.pendingStage.remove_if(
                [&](const auto &entry) { return entry.first == v; });
          }
        // What every path completed is complete; what a path completed by
        // waiting (accumulators) is not known, so it stays pending, which
        // only makes later reads wait more.
      }
      if (auto wait = dyn_cast<WaitOp>(op)) {
        if (wait.getBarrier() == BarrierKind::full) {
          if (failed(checkStagePhase(wait)))
            return failure();
          st.acquired.insert(wait.getStage());
        }
        continue;
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
        continue;
      }
      if (isa<ProxyFenceOp>(op)) {
        st.unfenced.clear();
        continue;
      }
      if (auto arrive = dyn_cast<ArriveOp>(op)) {
        if (arrive.getBarrier() != BarrierKind::empty)
          continue;
        auto pending = st.pendingStage.find(arrive.getStage());
        if (pending != st.pendingStage.end())
          return hazard(&op,
                        "releases a stage while an asynchronous read of it "
                        "may still be in flight",
                        pending->second.op,
                        "this read completes only at a dgemm.mma.wait that "
                        "leaves it no longer pending");
        if (Operation *reader = st.unfenced.lookup(arrive.getStage()))
          return hazard(&op,
                        "releases a stage to the producer's async-proxy (TMA) "
                        "writes while a generic-proxy read of it is not "
                        "fenced (no dgemm.proxy.fence in between)",
                        reader, "read through the generic proxy here");
        if (st.released.contains(arrive.getStage()))
          return op.emitError("releases a stage twice");
        st.released.insert(arrive.getStage());
        continue;
      }
      SmallVector<ResourceAccess> accesses = accessesOf(&op);
      unsigned group = st.numGroups;
      if (llvm::any_of(accesses, [](const ResourceAccess &a) {
            return a.proxy == Proxy::Async;
          }))
        ++st.numGroups;
      for (const ResourceAccess &a : accesses) {
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
    }
    // Values a loop body hands to its next iteration still in flight.
    llvm::SmallDenseSet<Value> handedOn;
    if (!carried.empty()) {
      auto yield = cast<scf::YieldOp>(block.getTerminator());
      std::optional<unsigned> oldest;
      for (unsigned pos : carried) {
        Value v = yield.getOperand(pos);
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
        if (!llvm::is_contained(carried, pos) && st.pendingOf(v))
          return hazard(yield, "yields iter_arg #" + Twine(pos) +
                                   " with an asynchronous access in flight, "
                                   "but it enters the loop complete",
                        nullptr, "");
      // The next iteration numbers the carried groups from 0: no group
      // newer than the oldest carried one may be left out.
      auto leftBehind = [&](const auto &pending,
                            const char *msg) -> LogicalResult {
        for (auto &[v, p] : pending)
          if (!handedOn.contains(v) && p.group >= *oldest)
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
    }
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
    return success();
  }

  /// A loop nested in the math role (see checkMathBlock).
  LogicalResult checkLoop(scf::ForOp loop, MathState &st) {
    SmallVector<unsigned> carried;
    SmallVector<std::tuple<unsigned, unsigned, Operation *>> byGroup;
    MathState body;
    for (auto [pos, v] : llvm::enumerate(loop.getInitArgs())) {
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
    for (auto &[gr, pos, op] : byGroup) {
      Value init = loop.getInitArgs()[pos];
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
      Value init = loop.getInitArgs()[pos];
      Value result = loop.getResult(pos);
      if (st.holds(init)) {
        st.released.insert(init);
        st.acquired.insert(result);
        if (Operation *reader = st.unfenced.lookup(init))
          st.unfenced[result] = reader;
      }
    }
    for (auto &[gr, pos, op] : byGroup) {
      Value init = loop.getInitArgs()[pos];
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

  WarpSpecializeOp ws;
  DenseMap<ResourceKind, bool> asyncWriters;
};

struct VerifySyncPass
    : public mlir::dgemm::impl::DGemmVerifySyncBase<VerifySyncPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](WarpSpecializeOp ws) {
      if (!ws.getFullArrivalsAttr() || !ws.getEmptyArrivalsAttr()) {
        ws.emitError("barrier arrival counts are not set: the schedule has no "
                     "placed synchronization");
        return WalkResult::interrupt();
      }
      return failed(Checker(ws).run()) ? WalkResult::interrupt()
                                       : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
