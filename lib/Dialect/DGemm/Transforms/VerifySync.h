//===- VerifySync.h - The checker behind dgemm-verify-sync -------*- C++
//-*-===//
//
// An independent check of a kernel's synchronization against the resource
// effects its operations declare. It shares no code with dgemm-place-sync
// beyond the effect declarations, so a mistake in one is caught by the other;
// hand-written schedules (such as DeepGEMM 2.6.1's) are checked the same way.
//
// One rule family per file:
//   VerifySync.cpp       the pass, the shared helpers, the producer's stage
//                        writes and the descriptor slots;
//   VerifySyncMath.cpp   the math role's stage reads, releases, proxy fences
//                        and in-flight WGMMAs, through branches and loops;
//   VerifySyncRings.cpp  arrival counts, stage rings and the math
//                        warpgroups' turns;
//   VerifySyncPark.cpp   the park (tiles handed between roles).
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_LIB_DIALECT_DGEMM_TRANSFORMS_VERIFYSYNC_H
#define DGEMM_LIB_DIALECT_DGEMM_TRANSFORMS_VERIFYSYNC_H

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::dgemm::verify_sync {

/// The resource accesses `op` declares (none without the interface).
SmallVector<ResourceAccess> accessesOf(Operation *op);

/// The first operation in `region` that accesses `kind` the way `pred`
/// wants: the other side of a hazard, for the diagnostic's note.
Operation *findAccess(Region &region, ResourceKind kind,
                      llvm::function_ref<bool(const ResourceAccess &)> pred);

/// Checks one dgemm.warp_specialize: every rule, the first violation
/// reported as an error at the offending operation.
class SyncChecker {
public:
  explicit SyncChecker(WarpSpecializeOp ws) : ws(ws) {}

  LogicalResult run();

private:
  // --- Shared (VerifySync.cpp) -------------------------------------------
  static bool sameValue(Value a, Value b, int depth = 0);
  Value key(Value v);
  InFlightDiagnostic hazard(Operation *op, const Twine &msg, Operation *other,
                            const Twine &otherMsg);
  LogicalResult checkStagePhase(WaitOp wait);

  // --- The producer (VerifySync.cpp) --------------------------------------
  LogicalResult checkProducerBlock(Block &block);
  LogicalResult checkDescriptors();

  // --- Counts, rings, turns (VerifySyncRings.cpp) -------------------------
  LogicalResult checkArrivalCounts();
  LogicalResult checkStageRings();
  enum class Turn { Unstarted, Free, Held, Finished };
  LogicalResult checkTurns();
  FailureOr<Turn> checkTurnBlock(Block &block, Turn st);

  // --- The park (VerifySyncPark.cpp) --------------------------------------
  /// One role's side of the park: its region, the loop whose body holds its
  /// park operations, and one of its accesses (for diagnostics).
  struct ParkSide {
    Region *role = nullptr;
    scf::ForOp loop;
    Operation *access = nullptr;
  };
  LogicalResult checkPark();
  LogicalResult findParkSide(Region *role, ParkSide &writer, ParkSide &reader);
  LogicalResult checkParkHandOvers(ParkSide &side, bool writes);
  LogicalResult checkParkPairing(ParkSide &writer, ParkSide &reader);
  LogicalResult checkParkSlot(Operation *user, Value slot, scf::ForOp loop);

  // --- The math role (VerifySyncMath.cpp) ---------------------------------
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
    /// Accumulators a chained WGMMA (an async read-modify-write) overwrote
    /// in place, with that WGMMA: dead from there on.
    DenseMap<Value, Operation *> overwritten;
    unsigned numGroups = 0;

    /// `v`'s async access still in flight, if any.
    std::optional<Pending> pendingOf(Value v) const;
    /// Whether stage `v` is acquired and not released.
    bool holds(Value v) const;
  };
  bool asyncWriter(ResourceKind kind);
  LogicalResult
  checkMathBlock(Block &block, MathState st, ArrayRef<unsigned> carried = {},
                 llvm::SmallDenseSet<Value> *releasedOut = nullptr,
                 DenseMap<Value, Operation *> *overwrittenOut = nullptr);
  LogicalResult checkMathBranches(Operation &op, MathState &st);
  LogicalResult checkMathOp(Operation &op, MathState &st);
  LogicalResult checkRelease(ArriveOp arrive, MathState &st);
  LogicalResult checkMathAccesses(Operation &op, MathState &st);
  LogicalResult checkChainedAccumulators(Operation &op,
                                         ArrayRef<ResourceAccess> accesses,
                                         MathState &st);
  LogicalResult checkIterationEnd(Block &block, MathState &st,
                                  ArrayRef<unsigned> carried,
                                  llvm::SmallDenseSet<Value> &handedOn);
  LogicalResult checkLoop(scf::ForOp loop, MathState &st);

  WarpSpecializeOp ws;
  DenseMap<ResourceKind, bool> asyncWriters;
  /// Each dgemm.stage's representative: the first one seen of the same
  /// number of stages on an iteration computed alike.
  DenseMap<Operation *, StageOp> stageAlias;
  SmallVector<StageOp> stageReps;
};

} // namespace mlir::dgemm::verify_sync

#endif // DGEMM_LIB_DIALECT_DGEMM_TRANSFORMS_VERIFYSYNC_H
