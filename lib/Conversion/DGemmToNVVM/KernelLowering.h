//===- KernelLowering.h - Shared state of the dgemm-to-NVVM patterns -*- C++
//-*-===//
//
// The conversion of one dgemm.kernel is a set of patterns, one per op, grouped
// by concern (PipelinePatterns.cpp, MmaPatterns.cpp, ScalePatterns.cpp,
// EpiloguePatterns.cpp, ParkPatterns.cpp, KernelSkeleton.cpp here; the
// nvgpu patterns of convert-dgemm-to-nvgpu in ../DGemmToNVGPU). They share
// the kernel's context: its function, configuration, shared-memory layout
// (the heuristics library's, so the runtime's totals and these offsets are
// one computation) and the values created once for every op.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_LIB_CONVERSION_DGEMMTONVVM_KERNELLOWERING_H
#define DGEMM_LIB_CONVERSION_DGEMMTONVVM_KERNELLOWERING_H

#include "dgemm/Dialect/DGemm/IR/DGemm.h"
#include "dgemm/Heuristics/KernelConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::dgemm::nvvm_lowering {

/// The dynamic shared-memory array every kernel carves up.
inline constexpr StringLiteral kSmemSymbol = "dgemm_dynamic_smem";

/// Declares the array in `module` unless it is there.
void declareDynamicSmem(ModuleOp module);

/// What every pattern of one kernel shares.
struct KernelContext {
  /// `kernel`: the dgemm.kernel (convert-dgemm-to-nvgpu) or the llvm.func it
  /// became (convert-dgemm-to-nvvm); both take the kernel's arguments
  /// (KernelOp::Arg) as the entry block's.
  KernelContext(Operation *kernel, ConfigAttr config);

  Operation *kernel;
  ConfigAttr config;
  /// Byte offsets of the shared-memory carve-up (heuristics::smemLayoutFor).
  ::dgemm::heuristics::SmemLayout layout;
  MLIRContext *ctx;
  Block &entry() const { return kernel->getRegion(0).front(); }
  Value arg(KernelOp::Arg a) const { return entry().getArgument(a); }
  /// B's rows reach shared memory in quad order (quad_b = 1): fragment
  /// column (j, c) of lane q is tile column 16(j / 2) + 4q + 2(j % 2) + c.
  bool quadB;
  /// The kernel adds every tile to d itself (epilogue in_place or parked).
  bool inPlace;
  /// Tiles may add their sums to d with red.global.add (epilogue reduction,
  /// in_place or parked), for tiles of at most reduceMaxBlocks K blocks
  /// (0: every tile).
  bool reduce;
  int64_t reduceMaxBlocks;
  /// Elements per reduction: 4 (16 bytes, lanes swapping half their sums)
  /// except with B multicast (cluster_m = 2), where 2 measured faster.
  int64_t redVectorWidth;

  /// Threads of the producer warpgroup (from thread 32 on) that run the
  /// workers' role (dgemm.warp_specialize's worker_threads; 0: none). Set
  /// by the warp_specialize lowering, read by the park patterns.
  int64_t workerThreads = 0;
  // Set by convert-dgemm-to-nvgpu before its patterns run.
  /// Math-role releases: one arrive per warp (else per thread), following
  /// the arrival count dgemm-place-sync recorded.
  bool releasePerWarp = true;
  /// Producer-thread registers: the last pipeline iteration that loaded
  /// through each descriptor slot (what a drain must wait for).
  SmallVector<Value> lastUse;
  /// The math warpgroup index broadcast from lane 0 at the kernel's entry
  /// (made by the first dgemm.mma lowered).
  Value uniformWg;
};

/// Small emitters over a kernel's context, shared by the patterns.
class KernelEmitter {
public:
  explicit KernelEmitter(KernelContext &k)
      : k(k), config(k.config), layout(k.layout), ctx(k.ctx), quadB(k.quadB) {}

protected:
  Value i32(OpBuilder &b, Location loc, int64_t v) const {
    return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
  }
  Value i64(OpBuilder &b, Location loc, int64_t v) const {
    return b.create<LLVM::ConstantOp>(loc, b.getI64Type(), v);
  }
  Type smemPtr() const { return LLVM::LLVMPointerType::get(ctx, 3); }
  Type genericPtr() const { return LLVM::LLVMPointerType::get(ctx); }
  Type globalPtr() const { return LLVM::LLVMPointerType::get(ctx, 1); }
  Value arg(KernelOp::Arg a) const { return k.arg(a); }

  /// Shared-memory pointer `base + offset` (offset an i32 value).
  Value smemAt(OpBuilder &b, Location loc, Value offset) const;
  Value stageBuffer(OpBuilder &b, Location loc, int64_t base, int64_t bytes,
                    Value stage) const;
  Value barrier(OpBuilder &b, Location loc, BarrierKind kind,
                Value stage) const;
  Value tid(OpBuilder &b, Location loc) const {
    return b.create<NVVM::ThreadIdXOp>(loc, b.getI32Type());
  }
  /// This CTA's rank in its cluster: clusters are consecutive CTAs along x.
  Value clusterRank(OpBuilder &b, Location loc) const;
  /// All threads of every CTA of the cluster (not warp-aligned).
  void clusterSync(OpBuilder &b, Location loc) const;
  /// Address of descriptor slot `slot` of `operand` for this CTA:
  /// workspace + ((blockIdx.x * slots + slot) * 2 + operand) * 128.
  Value slotAddress(OpBuilder &b, Location loc, TmaOperand operand,
                    Value slot) const;
  Value toGeneric(OpBuilder &b, Location loc, Value p) const {
    return b.create<LLVM::AddrSpaceCastOp>(loc, genericPtr(), p);
  }
  void inlinePtx(OpBuilder &b, Location loc, StringRef ptx,
                 StringRef constraints, ValueRange operands) const;
  /// Spins until the phase of parity `parity` of the mbarrier at `bar`
  /// completed (docs/UpstreamNVGPU.md: why not nvvm.mbarrier.try_wait).
  void waitParity(OpBuilder &b, Location loc, Value bar, Value parity) const;

  /// lastUse[r] = (slot == r) ? it : lastUse[r], for every r: plain stores
  /// to scalar allocas, which SROA turns into registers.
  void recordUse(OpBuilder &b, Location loc, Value slot, Value it) const;

  /// The parked tile (epilogue parked) and its two mbarriers.
  Value parkBarrier(OpBuilder &b, Location loc, bool full) const;
  /// Unit u of park row r sits at (u & ~7) | ((u & 7) ^ parkSwizzle(r)), with
  /// parkSwizzle(r) = 2 (r % 4). An 8-byte store of the math warps is served
  /// in two half-warp passes, each over rows r .. r + 3 (lane / 4) and 8
  /// bytes of one unit pair per quad lane: the four rows' unit pairs (j % 4)
  /// ^ (r % 4) are distinct, so each pass hits all 32 banks once. A 16-byte
  /// load of the workers reads 8 consecutive units of one row per
  /// quarter-warp pass: a permutation of one 128-byte group.
  Value parkSwizzle(OpBuilder &b, Location loc, Value row) const;
  /// The parked tile's record after the barriers: its coordinates as one
  /// value, (group * M tiles + m-block) * N tiles + n-block.
  Value parkRecord(OpBuilder &b, Location loc) const;
  /// (M tiles, N tiles) of the problem.
  std::pair<Value, Value> tileCounts(OpBuilder &b, Location loc) const;

  KernelContext &k;
  ConfigAttr config;
  const ::dgemm::heuristics::SmemLayout &layout;
  MLIRContext *ctx;
  bool quadB;
};

/// A pattern lowering one dgemm op of a kernel.
template <typename Op>
class KernelPattern : public OpConversionPattern<Op>, protected KernelEmitter {
public:
  explicit KernelPattern(KernelContext &k)
      : OpConversionPattern<Op>(k.ctx), KernelEmitter(k) {}
};

/// Math warpgroup index (0-based) of the executing thread.
Value mathWarpgroup(OpBuilder &b, Location loc, Value tid);

/// Fragment coordinates of the executing math thread for m64nNk32 f32
/// accumulators: register r = j*4 + i*2 + c holds row (16*warp + lane/4 + 8*i)
/// of the warpgroup's 64 rows and WGMMA column (8*j + 2*(lane%4) + c), which
/// is tile column colInTile + colOf(j) + c:
/// - natural B rows: colInTile = 2*(lane%4), colOf(j) = 8j;
/// - quad-ordered B rows (quad_b = 1): colInTile = 4*(lane%4),
///   colOf(j) = 16*(j/2) + 2*(j%2), so that groups 2g and 2g + 1 hold 4
///   consecutive columns of each row.
struct Fragment {
  Value rowInTile; ///< row of i = 0 within the CTA tile
  Value colInTile; ///< column of j = 0, c = 0
  bool quads = false;
  int64_t colOf(int64_t j) const {
    return quads ? 16 * (j / 2) + 2 * (j % 2) : 8 * j;
  }
};
Fragment fragmentOf(OpBuilder &b, Location loc, Value tid, bool quads);

/// An epilogue's sums by 8-column group: the thread's pair of group j in row
/// half i is elements 4jj + 2i and 4jj + 2i + 1 of the sum slice holding j
/// (jj: j's group within that slice).
struct SumPairs {
  SmallVector<std::pair<Value, int64_t>> groupAt;
  explicit SumPairs(ValueRange tileSums);
  Value pair(OpBuilder &b, Location loc, int i, int64_t j) const;
};

/// The c prefetch of a tile whose epilogue (or park store) is `op`
/// (EpiloguePatterns.cpp; the park store uses it too).
void prefetchTileC(KernelContext &k, Operation *op, ValueRange sums,
                   Value group, Value mBlock, Value nBlock);

// Pattern sets, one per concern. The pass applies them in phases
// (DGemmToNVVM.cpp says why the order matters).
/// dgemm.stage, wait, desc.update/publish, proxy.fence.
void populatePipelinePatterns(KernelContext &k, RewritePatternSet &patterns);
/// dgemm.mma, mma.wait, turn.
void populateMmaPatterns(KernelContext &k, RewritePatternSet &patterns);
/// dgemm.load_scales, promote.
void populateScalePatterns(KernelContext &k, RewritePatternSet &patterns);
/// dgemm.epilogue.
void populateEpiloguePatterns(KernelContext &k, RewritePatternSet &patterns);
/// dgemm.park.store, park.reduce.
void populateParkPatterns(KernelContext &k, RewritePatternSet &patterns);
/// dgemm.load_block_scale, store_rows (the m-grouped kernel).
void populateMGroupedPatterns(KernelContext &k, RewritePatternSet &patterns);
/// dgemm.warp_specialize (role dispatch).
void populateSkeletonPatterns(KernelContext &k, RewritePatternSet &patterns);

} // namespace mlir::dgemm::nvvm_lowering

#endif // DGEMM_LIB_CONVERSION_DGEMMTONVVM_KERNELLOWERING_H
