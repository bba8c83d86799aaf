//===- VerifySync.cpp - The dgemm-verify-sync pass ------------------------===//
//
// The pass and the rules shared by every role (VerifySync.h has the map of
// the rule files), the producer's stage writes and the descriptor slots.
//
//===----------------------------------------------------------------------===//

#include "VerifySync.h"

namespace mlir::dgemm {
#define GEN_PASS_DEF_DGEMMVERIFYSYNC
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::verify_sync;

SmallVector<ResourceAccess> verify_sync::accessesOf(Operation *op) {
  SmallVector<ResourceAccess> accesses;
  if (auto iface = dyn_cast<ResourceAccessOpInterface>(op))
    iface.getResourceAccesses(accesses);
  return accesses;
}

Operation *
verify_sync::findAccess(Region &region, ResourceKind kind,
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

namespace {
TmaOperand operandOfSlot(ResourceKind kind) {
  return kind == ResourceKind::DescSlotA ? TmaOperand::a : TmaOperand::b;
}
} // namespace

LogicalResult SyncChecker::run() {
  if (failed(checkArrivalCounts()) || failed(checkStageRings()) ||
      failed(checkTurns()) ||
      failed(checkProducerBlock(ws.getProducer().front())) ||
      failed(checkDescriptors()) ||
      failed(checkMathBlock(ws.getMath().front(), MathState())) ||
      failed(checkPark()))
    return failure();
  return success();
}

/// Whether `a` and `b` are computed alike: the same value, the same
/// argument of the kernel, or the same arith operation, CTA index or grid
/// size on operands computed alike (values of different roles' regions;
/// only operations whose result is the same in every thread of the CTA).
bool SyncChecker::sameValue(Value a, Value b, int depth) {
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
  bool uniform =
      isa<NVVM::BlockIdXOp, NVVM::GridDimXOp>(x) ||
      (isa<arith::ArithDialect>(x->getDialect()) && isMemoryEffectFree(x));
  if (!uniform || x->getName() != y->getName() ||
      x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumOperands() != y->getNumOperands() || x->getNumRegions() != 0 ||
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
Value SyncChecker::key(Value v) {
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

InFlightDiagnostic SyncChecker::hazard(Operation *op, const Twine &msg,
                                       Operation *other,
                                       const Twine &otherMsg) {
  InFlightDiagnostic diag = op->emitError(msg);
  if (other)
    diag.attachNote(other->getLoc())
        << otherMsg << " ('" << other->getName() << "')";
  return diag;
}

/// A stage barrier's wait must use the phase of the stage's own
/// dgemm.stage: both roles derive stage and phase from the same pipeline
/// iteration, so any other parity would wait for the wrong pass over the
/// ring (or not at all).
LogicalResult SyncChecker::checkStagePhase(WaitOp wait) {
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
LogicalResult SyncChecker::checkProducerBlock(Block &block) {
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
LogicalResult SyncChecker::checkDescriptors() {
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
        Operation *reader =
            findAccess(ws.getProducer(), a.kind, [](const ResourceAccess &r) {
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
      if (!sameValue(drain.getBeforeIteration(), update.getBeforeIteration())) {
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

namespace {
struct VerifySyncPass
    : public mlir::dgemm::impl::DGemmVerifySyncBase<VerifySyncPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](WarpSpecializeOp ws) {
      if (!ws.getFullArrivalsAttr() || !ws.getEmptyArrivalsAttr()) {
        ws.emitError("barrier arrival counts are not set: the schedule has no "
                     "placed synchronization");
        return WalkResult::interrupt();
      }
      return failed(SyncChecker(ws).run()) ? WalkResult::interrupt()
                                           : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
