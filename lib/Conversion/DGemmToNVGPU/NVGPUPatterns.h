//===- NVGPUPatterns.h - The dgemm-to-NVGPU patterns ------------*- C++ -*-===//
//
// convert-dgemm-to-nvgpu lowers the kernel ops that have a fitting upstream
// nvgpu op (docs/UpstreamNVGPU.md): barrier initialization, arrives and
// multicast TMA loads, with the other TMA loads and the descriptor-slot
// bookkeeping the loads feed. One pattern per
// op, in BarrierInit.cpp, Arrive.cpp and TmaLoad.cpp. The nvgpu ops take
// memrefs and mbarrier groups in workgroup memory; NVGPUEmitter gives them
// views of the one dynamic shared-memory array at the offsets of
// heuristics::smemLayoutFor, so that the layout stays one computation.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_LIB_CONVERSION_DGEMMTONVGPU_NVGPUPATTERNS_H
#define DGEMM_LIB_CONVERSION_DGEMMTONVGPU_NVGPUPATTERNS_H

#include "DGemmToNVVM/KernelLowering.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir::dgemm::nvgpu_lowering {

using nvvm_lowering::KernelContext;

/// The emitters of the NVVM patterns, plus views of shared memory and tensor
/// maps as the nvgpu ops take them.
class NVGPUEmitter : public nvvm_lowering::KernelEmitter {
public:
  NVGPUEmitter(KernelContext &k, const LLVMTypeConverter &converter)
      : KernelEmitter(k), converter(converter) {}

protected:
  /// The barrier of `kind` for `stage` (the park's: its one slot) as an
  /// mbarrier group ...
  Value barrierGroup(OpBuilder &b, Location loc, BarrierKind kind,
                     Value stage) const;
  /// ... and its index there.
  Value barrierIndex(OpBuilder &b, Location loc) const;
  /// The address of the stage's tile of `operand`.
  Value stagePtr(OpBuilder &b, Location loc, TmaOperand operand,
                 Value stage) const;
  /// The tile at `ptr` (stagePtr's) as the memref a TMA load of it writes
  /// (the shape of the load's box); with `share`, this CTA's share of a
  /// multicast B tile, at its cluster rank's rows.
  Value stageTile(OpBuilder &b, Location loc, TmaOperand operand, bool share,
                  Value ptr) const;
  /// The tensor map at generic address `map` as the descriptor type of
  /// `operand`'s loads (their box: stageTile's shape).
  Value tensorMap(OpBuilder &b, Location loc, TmaOperand operand, bool share,
                  Value map) const;
  /// An i32 value as an index.
  Value index(OpBuilder &b, Location loc, Value v) const;

private:
  MemRefType tileType(TmaOperand operand, bool share) const;
  /// A view of shared memory at `ptr` as `type` (a memref or an mbarrier
  /// group): the LLVM memref descriptor the upstream type converter expects,
  /// cast to `type` as dialect conversion itself materializes it.
  /// reconcile-unrealized-casts removes the cast once convert-nvgpu-to-nvvm
  /// has converted the op that reads the view.
  Value view(OpBuilder &b, Location loc, Type type, MemRefType memref,
             Value ptr) const;

  const LLVMTypeConverter &converter;
};

/// A pattern lowering one dgemm op of a kernel to nvgpu.
template <typename Op>
class NVGPUPattern : public OpConversionPattern<Op>, protected NVGPUEmitter {
public:
  NVGPUPattern(KernelContext &k, const LLVMTypeConverter &converter)
      : OpConversionPattern<Op>(k.ctx), NVGPUEmitter(k, converter) {}
};

/// The producer's bookkeeping cells (KernelContext::lastUse) at the kernel's
/// entry, before any pattern runs.
void createDescriptorCells(KernelContext &k);

/// dgemm.warp_specialize's barrier initialization.
void populateBarrierInitPatterns(KernelContext &k,
                                 const LLVMTypeConverter &converter,
                                 RewritePatternSet &patterns);
/// dgemm.arrive.
void populateArrivePatterns(KernelContext &k,
                            const LLVMTypeConverter &converter,
                            RewritePatternSet &patterns);
/// dgemm.tma.load and dgemm.desc.drain.
void populateTmaLoadPatterns(KernelContext &k,
                             const LLVMTypeConverter &converter,
                             RewritePatternSet &patterns);

/// Every pattern of the stage.
void populateDGemmToNVGPUPatterns(KernelContext &k,
                                  const LLVMTypeConverter &converter,
                                  RewritePatternSet &patterns);

} // namespace mlir::dgemm::nvgpu_lowering

#endif // DGEMM_LIB_CONVERSION_DGEMMTONVGPU_NVGPUPATTERNS_H
