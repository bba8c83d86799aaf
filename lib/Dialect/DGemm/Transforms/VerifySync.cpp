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
    if (failed(checkArrivalCounts()) || failed(checkStageRings()) ||
        failed(checkTurns()) ||
        failed(checkProducerBlock(ws.getProducer().front())) ||
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

  /// `v`, or, for a result of a dgemm.stage, the same result of the first
  /// dgemm.stage of the same number of stages on an iteration computed alike
  /// (sameValue): both name one stage and one phase, so a wait through one
  /// acquires what the other reads or releases.
  Value key(Value v) {
    auto stage = v.getDefiningOp<StageOp>();
    if (!stage)
      return v;
    StageOp rep = stageAlias.lookup(stage);
    if (!rep) {
      rep = stage;
      for (StageOp other : stageReps)
        if (other.getStages() == stage.getStages() &&
            sameValue(other.getIteration(), stage.getIteration())) {
          rep = other;
          break;
        }
      if (rep == stage)
        stageReps.push_back(stage);
      stageAlias[stage] = rep;
    }
    return rep->getResult(cast<OpResult>(v).getResultNumber());
  }

  /// The barrier counts dgemm-place-sync derives: a full phase completes
  /// with the producer's one arming arrive (the TMA bytes do the rest), an
  /// empty phase with one arrive per math warp.
  LogicalResult checkArrivalCounts() {
    auto kernel = ws->getParentOfType<KernelOp>();
    if (!kernel)
      return ws.emitError("is not inside a dgemm.kernel: the barrier counts "
                          "and the stage ring have no configuration to "
                          "match");
    if (*ws.getFullArrivals() != 1)
      return ws.emitError("full_arrivals is ")
             << *ws.getFullArrivals()
             << " but a full phase completes with the producer's one "
                "arming arrive: it must be 1";
    int64_t warps = 4 * kernel.getConfig().getMathWarpgroups();
    if (int64_t(*ws.getEmptyArrivals()) != warps)
      return ws.emitError("empty_arrivals is ")
             << *ws.getEmptyArrivals()
             << " but an empty phase completes with one arrive per math "
                "warp: it must be "
             << warps;
    return success();
  }

  /// Every stage the barriers and the stage buffers name is a dgemm.stage of
  /// the configuration's number of stages: the producer's and the math
  /// role's rings then map an iteration to the same stage and phase, and
  /// never index a stage that does not exist.
  LogicalResult checkStageRings() {
    int64_t stages = ws->getParentOfType<KernelOp>().getConfig().getStages();
    auto check = [&](Operation *user, Value v) -> LogicalResult {
      auto stage = v.getDefiningOp<StageOp>();
      if (!stage || int64_t(stage.getStages()) == stages)
        return success();
      return hazard(user,
                    "uses a stage of a ring of " +
                        Twine(int64_t(stage.getStages())) +
                        " stages, but the kernel's configuration has " +
                        Twine(stages) + " stages",
                    stage, "the stage is mapped here");
    };
    WalkResult result = ws->walk([&](Operation *op) {
      Value stage;
      if (auto wait = dyn_cast<WaitOp>(op))
        stage = wait.getBarrier() == BarrierKind::full ||
                        wait.getBarrier() == BarrierKind::empty
                    ? wait.getStage()
                    : Value();
      if (auto arrive = dyn_cast<ArriveOp>(op))
        stage = arrive.getBarrier() == BarrierKind::full ||
                        arrive.getBarrier() == BarrierKind::empty
                    ? arrive.getStage()
                    : Value();
      if (stage && failed(check(op, stage)))
        return WalkResult::interrupt();
      for (const ResourceAccess &a : accessesOf(op))
        if (isStage(a.kind) && failed(check(op, a.index)))
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// The math warpgroups' turns on the tensor cores (dgemm.turn), lowered
  /// to one named barrier per warpgroup: `start` once at the role's entry
  /// (the last warpgroup arrives on warpgroup 0's barrier), then per block
  /// `wait` (bar.sync on the own barrier) and `pass` (bar.arrive on the
  /// next one's) strictly alternating, with the WGMMAs between them, then
  /// `finish` once at the role's exit (warpgroup 0 takes the last pass).
  /// Every warpgroup runs the same blocks, so when each path through the
  /// role alternates wait and pass between start and finish, the k-th wait
  /// of each warpgroup pairs with the k-th pass of the one before it and
  /// every barrier phase completes. A loop body or a branch must leave the
  /// turn as it found it. A role without turns has no named barriers to
  /// balance.
  enum class Turn { Unstarted, Free, Held, Finished };
  LogicalResult checkTurns() {
    for (Region *role : {&ws.getProducer(), &ws.getWorkers()}) {
      WalkResult r = role->walk([](TurnOp turn) {
        turn.emitError("takes a turn outside the math role: only the math "
                       "warpgroups take turns on the tensor cores");
        return WalkResult::interrupt();
      });
      if (r.wasInterrupted())
        return failure();
    }
    bool turns = ws.getMath()
                     .walk([](TurnOp) { return WalkResult::interrupt(); })
                     .wasInterrupted();
    if (!turns)
      return success();
    Block &entry = ws.getMath().front();
    FailureOr<Turn> end = checkTurnBlock(entry, Turn::Unstarted);
    if (failed(end))
      return failure();
    if (*end != Turn::Finished)
      return ws.emitError("the math role ")
             << (*end == Turn::Held ? "ends holding a turn"
                                    : "never finishes its turns")
             << " (no dgemm.turn finish at its exit): warpgroup 0's last "
                "named-barrier phase never completes and the CTA deadlocks";
    return success();
  }

  FailureOr<Turn> checkTurnBlock(Block &block, Turn st) {
    bool top = block.getParent() == &ws.getMath();
    for (Operation &op : block) {
      if (auto turn = dyn_cast<TurnOp>(op)) {
        auto fail = [&](const Twine &msg) -> FailureOr<Turn> {
          turn.emitError(msg);
          return failure();
        };
        switch (turn.getAction()) {
        case TurnAction::start:
          if (!top)
            return fail("starts the turns inside a loop or branch: start "
                        "runs once, at the math role's entry");
          if (st != Turn::Unstarted)
            return fail("starts the turns a second time: the first turn's "
                        "barrier would get an extra arrival");
          st = Turn::Free;
          break;
        case TurnAction::wait:
          if (st == Turn::Unstarted)
            return fail("waits for a turn before the turns are started (no "
                        "dgemm.turn start at the math role's entry): "
                        "warpgroup 0 waits forever");
          if (st == Turn::Held)
            return fail("waits for a turn while holding one (no dgemm.turn "
                        "pass since the last wait): the next warpgroup "
                        "never gets the turn and the CTA deadlocks");
          if (st == Turn::Finished)
            return fail("waits for a turn after the turns finished");
          st = Turn::Held;
          break;
        case TurnAction::pass:
          if (st != Turn::Held)
            return fail("passes a turn it does not hold (no dgemm.turn wait "
                        "before it): the named barriers' arrivals and syncs "
                        "no longer pair up");
          st = Turn::Free;
          break;
        case TurnAction::finish:
          if (!top)
            return fail("finishes the turns inside a loop or branch: finish "
                        "runs once, at the math role's exit");
          if (st == Turn::Held)
            return fail("finishes the turns while holding one (no dgemm.turn "
                        "pass after the last wait)");
          if (st != Turn::Free)
            return fail(st == Turn::Unstarted
                            ? "finishes turns that were never started (no "
                              "dgemm.turn start at the math role's entry)"
                            : "finishes the turns a second time");
          st = Turn::Finished;
          break;
        }
        continue;
      }
      if (isa<MmaOp>(op) && st != Turn::Held) {
        op.emitError("issues WGMMAs outside the warpgroup's turn (no "
                     "dgemm.turn wait before them, or a pass already)");
        return failure();
      }
      if (op.getNumRegions() == 0)
        continue;
      // Each region, taken or not, and each iteration of a loop, leaves the
      // turn as it found it.
      for (Region &region : op.getRegions())
        for (Block &nested : region) {
          FailureOr<Turn> out = checkTurnBlock(nested, st);
          if (failed(out))
            return failure();
          if (*out != st) {
            op.emitError(isa<scf::ForOp>(op) ? "has an iteration that "
                                             : "has a branch that ")
                << (*out == Turn::Held ? "keeps a turn it took"
                                       : "gives up a turn it did not take")
                << " (dgemm.turn wait and pass do not pair up in it): the "
                   "warpgroups' named barriers fall out of step";
            return failure();
          }
        }
    }
    return st;
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
    if (!stage || key(wait.getPhase()) != key(stage.getPhase()))
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
          acquired.insert(key(wait.getStage()));
        }
        continue;
      }
      if (auto arrive = dyn_cast<ArriveOp>(op)) {
        if (arrive.getBarrier() != BarrierKind::full)
          continue;
        Value stage = key(arrive.getStage());
        // A second expect_tx arrive completes the phase early (or arms the
        // next one): the math role would read bytes that have not landed.
        if (ArriveOp first = armed.lookup(stage))
          return hazard(arrive,
                        "arms the full barrier of a stage twice in one "
                        "iteration (full_arrivals counts one arming arrive)",
                        first, "first armed here");
        armed[stage] = arrive;
        continue;
      }
      for (const ResourceAccess &a : accessesOf(&op)) {
        if (!isStage(a.kind) || a.access != AccessKind::Write)
          continue;
        if (!acquired.contains(key(a.index)))
          return hazard(&op,
                        "writes the " + stringifyResourceKind(a.kind) +
                            " of a stage before waiting on its empty barrier",
                        findAccess(ws.getMath(), a.kind,
                                   [](const ResourceAccess &r) {
                                     return r.access == AccessKind::Read;
                                   }),
                        "the math role may still be reading it here");
        auto &w = written[key(a.index)];
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
    for (auto [stage, arrive] : armed)
      if (!written.count(stage))
        return arrive.emitError("arms the full barrier of a stage that "
                                "receives no load in this block: its bytes "
                                "never arrive and the math role would wait "
                                "forever");
    return success();
  }

  /// Descriptor slots: a rewrite must directly follow a drain of the same
  /// slot for the same pipeline iteration (the update's before_iteration),
  /// its publish must name the slot rewritten, and no load may read a
  /// rewritten slot before it is published. The walk is in program order
  /// over the whole role, so loads from earlier iterations count as possibly
  /// in flight.
  LogicalResult checkDescriptors() {
    DenseMap<ResourceKind, DescUpdateOp> unpublished;
    WalkResult result = ws.getProducer().walk([&](Operation *op) {
      if (auto publish = dyn_cast<DescPublishOp>(op)) {
        ResourceKind kind = publish.getOperand() == TmaOperand::a
                                ? ResourceKind::DescSlotA
                                : ResourceKind::DescSlotB;
        if (DescUpdateOp update = unpublished.lookup(kind)) {
          if (!sameValue(update.getSlot(), publish.getSlot())) {
            hazard(publish,
                   "publishes a descriptor slot other than the one "
                   "rewritten: loads of the rewritten slot would read it "
                   "before its tensormap release/acquire",
                   update, "the pending rewrite");
            return WalkResult::interrupt();
          }
          unpublished.erase(kind);
        }
        return WalkResult::advance();
      }
      for (const ResourceAccess &a : accessesOf(op)) {
        if (!isDescSlot(a.kind))
          continue;
        if (a.access == AccessKind::Read) {
          if (DescUpdateOp w = unpublished.lookup(a.kind)) {
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
        auto update = dyn_cast<DescUpdateOp>(op);
        if (!update) {
          op->emitError("writes a descriptor slot but is not a "
                        "dgemm.desc.update: which pipeline iteration first "
                        "uses the slot is unknown, so no drain can cover it");
          return WalkResult::interrupt();
        }
        Operation *prev = op->getPrevNode();
        DescDrainOp drain;
        while (prev && isa<DescDrainOp, DescUpdateOp, DescPublishOp>(prev)) {
          auto d = dyn_cast<DescDrainOp>(prev);
          if (d && d.getOperand() == operandOfSlot(a.kind) &&
              sameValue(d.getSlot(), a.index)) {
            drain = d;
            break;
          }
          prev = prev->getPrevNode();
        }
        if (!drain) {
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
        // The drain waits for the loads of the iterations before its
        // before_iteration; any other iteration leaves some of the loads
        // that use the slot's old contents (or waits for loads never
        // issued).
        if (!sameValue(drain.getBeforeIteration(),
                       update.getBeforeIteration())) {
          hazard(op,
                 "rewrites the " + stringifyResourceKind(a.kind) +
                     " after a drain for another pipeline iteration (the "
                     "drain's before_iteration is not the update's)",
                 drain, "drained here");
          return WalkResult::interrupt();
        }
        unpublished[a.kind] = update;
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
          st.acquired.insert(key(wait.getStage()));
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
        continue;
      }
      SmallVector<ResourceAccess> accesses = accessesOf(&op);
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
    }
    // Values a loop body hands to its next iteration still in flight.
    llvm::SmallDenseSet<Value> handedOn;
    if (!carried.empty()) {
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

  WarpSpecializeOp ws;
  DenseMap<ResourceKind, bool> asyncWriters;
  /// Each dgemm.stage's representative: the first one seen of the same
  /// number of stages on an iteration computed alike.
  DenseMap<Operation *, StageOp> stageAlias;
  SmallVector<StageOp> stageReps;
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
