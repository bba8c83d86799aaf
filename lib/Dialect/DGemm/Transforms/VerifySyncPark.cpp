//===- VerifySyncPark.cpp - The park's hand-over rules ------------------===//
//
// A tile handed from one role to another through shared memory (the park):
// one hand-over per iteration of the same tile loop in both roles, the
// barriers' phases from the slot's dgemm.stage, the arrival counts the two
// roles' threads.
//
//===----------------------------------------------------------------------===//

#include "VerifySync.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::verify_sync;

namespace {
bool isParkBarrier(BarrierKind k) {
  return k == BarrierKind::park_full || k == BarrierKind::park_empty;
}

std::optional<ResourceAccess> parkAccess(Operation *op) {
  for (const ResourceAccess &a : accessesOf(op))
    if (a.kind == ResourceKind::Park)
      return a;
  return std::nullopt;
}
} // namespace

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
LogicalResult SyncChecker::checkPark() {
  ParkSide writer, reader;
  for (Region *role : {&ws.getProducer(), &ws.getMath(), &ws.getWorkers()}) {
    if (failed(findParkSide(role, writer, reader)))
      return failure();
    if (writer.role == role && failed(checkParkHandOvers(writer, true)))
      return failure();
    if (reader.role == role && failed(checkParkHandOvers(reader, false)))
      return failure();
  }
  if (!writer.role && !reader.role)
    return success();
  return checkParkPairing(writer, reader);
}

/// Which side of the park `role` is (its accesses say), and the one loop
/// whose body holds its park operations; a role without any is neither.
LogicalResult SyncChecker::findParkSide(Region *role, ParkSide &writer,
                                        ParkSide &reader) {
  SmallVector<Operation *> parkOps;
  role->walk([&](Operation *op) {
    auto wait = dyn_cast<WaitOp>(op);
    auto arrive = dyn_cast<ArriveOp>(op);
    if ((wait && isParkBarrier(wait.getBarrier())) ||
        (arrive && isParkBarrier(arrive.getBarrier())) || parkAccess(op))
      parkOps.push_back(op);
  });
  if (parkOps.empty())
    return success();
  std::optional<ResourceAccess> first;
  for (Operation *op : parkOps)
    if ((first = parkAccess(op)))
      break;
  if (!first)
    return parkOps.front()->emitError(
        "synchronizes on the park in a role that never accesses it");
  bool writes = first->access == AccessKind::Write;
  ParkSide &side = writes ? writer : reader;
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
  return success();
}

/// One hand-over per iteration of the side's loop, in program order: the
/// wait, the accesses, the arrive.
LogicalResult SyncChecker::checkParkHandOvers(ParkSide &side, bool writes) {
  BarrierKind waitKind =
      writes ? BarrierKind::park_empty : BarrierKind::park_full;
  BarrierKind arriveKind =
      writes ? BarrierKind::park_full : BarrierKind::park_empty;
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
  return success();
}

/// Both sides exist, the recorded arrival counts are the arriving roles'
/// threads, and the two loops walk the same range.
LogicalResult SyncChecker::checkParkPairing(ParkSide &writer,
                                            ParkSide &reader) {
  if (!writer.role || !reader.role)
    return (writer.role ? writer.access : reader.access)
        ->emitError(writer.role ? "writes the park, but no role reads it"
                                : "reads the park, but no role writes it");
  auto counts = [&](std::optional<uint32_t> got, Region &role,
                    const char *name) -> LogicalResult {
    int64_t threads = ws.getRoleThreads(role);
    if (!got || int64_t(*got) != threads)
      return ws.emitError(name) << " is " << (got ? int64_t(*got) : int64_t(0))
                                << " but the role that arrives on it has "
                                << threads << " threads";
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
LogicalResult SyncChecker::checkParkSlot(Operation *user, Value slot,
                                         scf::ForOp loop) {
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
