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

static TmaOperand operandOfSlot(ResourceKind kind) {
  return kind == ResourceKind::DescSlotA ? TmaOperand::a : TmaOperand::b;
}

namespace {
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
          if (!skipDescriptorDrain) {
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

  /// Math role: wait for a stage's full barrier before its first read; wait
  /// for WGMMA before a generic read of what it wrote; release the stage after
  /// its last read once no asynchronous read of it is pending, with a proxy
  /// fence first if the stage was read through the generic proxy (the
  /// producer refills it through the async proxy).
  ///
  /// Every operation with asynchronous effects is one WGMMA commit group, in
  /// program order. A generic read of an accumulator waits only for the group
  /// that writes it (`wgmma.wait_group` with the later groups left pending),
  /// so slices issued after it keep the tensor cores busy meanwhile.
  LogicalResult placeMath(Block &block) {
    llvm::MapVector<Value, Operation *> releaseAfter;
    llvm::SmallDenseSet<Value> genericRead;
    // Pending async effects, by the index of their commit group.
    llvm::MapVector<Value, unsigned> pendingStages;
    DenseMap<Value, unsigned> pendingAccs;
    unsigned numGroups = 0;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          if (failed(placeMath(nested)))
            return failure();
      SmallVector<ResourceAccess> accesses = accessesOf(&op);
      // Waits until every group up to and including `group` completed.
      auto completeThrough = [&](OpBuilder &b, unsigned group) {
        Operation *wait = b.create<MmaWaitOp>(
            op.getLoc(), static_cast<uint32_t>(numGroups - 1 - group));
        llvm::MapVector<Value, unsigned> still;
        for (auto [s, gr] : pendingStages) {
          if (gr <= group)
            releaseAfter[s] = wait;
          else
            still[s] = gr;
        }
        pendingStages = std::move(still);
        for (auto it = pendingAccs.begin(); it != pendingAccs.end();) {
          auto cur = it++;
          if (cur->second <= group)
            pendingAccs.erase(cur);
        }
        ++numWaits;
      };
      bool async = false;
      for (const ResourceAccess &a : accesses) {
        OpBuilder b(&op);
        async |= a.proxy == Proxy::Async;
        if (isStage(a.kind) && a.access == AccessKind::Read &&
            !releaseAfter.count(a.index) && !pendingStages.count(a.index)) {
          FailureOr<Value> phase = phaseOf(&op, a.index);
          if (failed(phase))
            return failure();
          b.create<WaitOp>(op.getLoc(), BarrierKind::full, a.index, *phase);
          releaseAfter[a.index] = nullptr;
          ++numWaits;
        }
        if (a.kind == ResourceKind::Accumulator &&
            a.access == AccessKind::Read && a.proxy == Proxy::Generic) {
          auto it = pendingAccs.find(a.index);
          if (it != pendingAccs.end())
            completeThrough(b, it->second);
        }
      }
      unsigned group = numGroups;
      if (async)
        ++numGroups;
      for (const ResourceAccess &a : accesses) {
        if (isStage(a.kind) && a.access == AccessKind::Read) {
          if (a.proxy == Proxy::Async) {
            pendingStages[a.index] = group;
          } else {
            genericRead.insert(a.index);
            releaseAfter[a.index] = &op;
          }
        }
        if (a.kind == ResourceKind::Accumulator &&
            a.access == AccessKind::Write && a.proxy == Proxy::Async)
          pendingAccs[a.index] = group;
      }
    }
    if (releaseAfter.empty())
      return success();
    // Asynchronous reads still pending at the end of the block complete
    // before the release.
    if (!pendingStages.empty()) {
      OpBuilder b(block.getParentOp()->getContext());
      if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
        b.setInsertionPoint(&block.back());
      else
        b.setInsertionPointToEnd(&block);
      Operation *wait = b.create<MmaWaitOp>(block.getParentOp()->getLoc(), 0u);
      for (auto [s, gr] : pendingStages)
        releaseAfter[s] = wait;
      ++numWaits;
    }
    for (auto [stage, after] : releaseAfter) {
      OpBuilder b(after->getContext());
      b.setInsertionPointAfter(after);
      if (fenceGenericReads && genericRead.contains(stage)) {
        b.create<ProxyFenceOp>(after->getLoc());
        ++numFences;
      }
      b.create<ArriveOp>(after->getLoc(), BarrierKind::empty, stage,
                         IntegerAttr());
      ++numArrives;
    }
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
      fenceGenericReads = !skipProxyFence && refilledAsynchronously(ws);
      if (failed(placeProducer(ws.getProducer().front())) ||
          failed(placeMath(ws.getMath().front())))
        return WalkResult::interrupt();
      // The producer role is one thread: one arrive completes a full phase
      // (the TMA bytes do the rest). A math role's release is one arrive per
      // warp, after a warp-wide sync (see convert-dgemm-to-nvvm).
      auto kernel = ws->getParentOfType<KernelOp>();
      Builder b(ws.getContext());
      ws.setFullArrivalsAttr(b.getI32IntegerAttr(1));
      ws.setEmptyArrivalsAttr(b.getI32IntegerAttr(
          (releasePerThread ? 128 : 4) *
          kernel.getConfig().getMathWarpgroups()));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
