//===- VerifySyncRings.cpp - Arrival counts, stage rings, turns -----------===//
//
// The rules that keep the barriers' phases in step: the recorded arrival
// counts, every stage a dgemm.stage of the configured ring, and the math
// warpgroups' turns balanced on every path.
//
//===----------------------------------------------------------------------===//

#include "VerifySync.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::verify_sync;

/// The barrier counts dgemm-place-sync derives: a full phase completes
/// with the producer's one arming arrive (the TMA bytes do the rest), an
/// empty phase with one arrive per math warp.
LogicalResult SyncChecker::checkArrivalCounts() {
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
LogicalResult SyncChecker::checkStageRings() {
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
LogicalResult SyncChecker::checkTurns() {
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

FailureOr<SyncChecker::Turn> SyncChecker::checkTurnBlock(Block &block,
                                                         Turn st) {
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
