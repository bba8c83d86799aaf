//===- SharedMemoryViews.cpp - nvgpu views of the kernel's shared memory --===//
//
// The nvgpu ops name shared memory as memrefs and mbarrier groups in
// workgroup memory. dgemm's kernel has one dynamic shared-memory array,
// carved by byte offsets that the heuristics library computes once for the
// runtime and the compiler (smemLayoutFor). Each view here is that array at
// one of those offsets, so the layout stays one computation and
// `nvgpu.mbarrier.create` (which allocates a global of its own) is not used.
//
//===----------------------------------------------------------------------===//

#include "NVGPUPatterns.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvgpu_lowering;

static Attribute workgroup(MLIRContext *ctx) {
  return gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
}

Value NVGPUEmitter::view(OpBuilder &b, Location loc, Type type,
                         MemRefType memref, Value ptr) const {
  Value desc =
      MemRefDescriptor::fromStaticShape(b, loc, converter, memref, ptr);
  return b.create<UnrealizedConversionCastOp>(loc, type, desc).getResult(0);
}

Value NVGPUEmitter::barrierGroup(OpBuilder &b, Location loc, BarrierKind kind,
                                 Value stage) const {
  // A group of one: the barrier at the address dgemm's own waits compute
  // (KernelEmitter::barrier), so that LLVM shares that computation between a
  // wait and the arrive or load on the same barrier.
  auto group = nvgpu::MBarrierGroupType::get(ctx, workgroup(ctx), 1);
  return view(b, loc, group, nvgpu::getMBarrierMemrefType(ctx, group),
              barrier(b, loc, kind, stage));
}

Value NVGPUEmitter::barrierIndex(OpBuilder &b, Location loc) const {
  return b.create<arith::ConstantIndexOp>(loc, 0);
}

MemRefType NVGPUEmitter::tileType(TmaOperand operand, bool share) const {
  Type i8 = IntegerType::get(ctx, 8), f32 = Float32Type::get(ctx);
  int64_t bytesK = config.getBlockK();
  SmallVector<int64_t> shape;
  Type element = i8;
  switch (operand) {
  case TmaOperand::a:
    shape = {config.getBlockM(), bytesK};
    break;
  case TmaOperand::b: {
    int64_t rows = config.getBlockN() / (share ? config.getClusterM() : 1);
    // Quad-ordered B: the 5-D box (K, c, q, h, g), outermost first.
    if (quadB)
      shape = {rows / 16, 2, 4, 2, bytesK};
    else
      shape = {rows, bytesK};
    break;
  }
  // A block's slice of one K block of scales: one box row.
  case TmaOperand::sfa:
    shape = {1, config.getBlockM()};
    element = f32;
    break;
  case TmaOperand::sfb:
    shape = {1, config.getBlockN()};
    element = f32;
    break;
  }
  return MemRefType::get(shape, element, MemRefLayoutAttrInterface(),
                         workgroup(ctx));
}

Value NVGPUEmitter::stagePtr(OpBuilder &b, Location loc, TmaOperand operand,
                             Value stage) const {
  switch (operand) {
  case TmaOperand::a:
    return stageBuffer(b, loc, layout.aBase, layout.aBytes, stage);
  case TmaOperand::b:
    return stageBuffer(b, loc, layout.bBase, layout.bBytes, stage);
  case TmaOperand::sfa:
    return stageBuffer(b, loc, layout.sfaBase, layout.sfaBytes, stage);
  case TmaOperand::sfb:
    return stageBuffer(b, loc, layout.sfbBase, layout.sfbBytes, stage);
  }
  llvm_unreachable("unknown operand");
}

Value NVGPUEmitter::stageTile(OpBuilder &b, Location loc, TmaOperand operand,
                              bool share, Value ptr) const {
  // A multicast load writes this CTA's rows of the B tile at the same offset
  // of the stage in every CTA of the cluster.
  if (share) {
    Value offset = b.create<LLVM::MulOp>(
        loc, clusterRank(b, loc),
        i32(b, loc, layout.bBytes / config.getClusterM()));
    ptr = b.create<LLVM::GEPOp>(loc, ptr.getType(), b.getI8Type(), ptr,
                                ValueRange{offset});
  }
  MemRefType type = tileType(operand, share);
  return view(b, loc, type, type, ptr);
}

Value NVGPUEmitter::tensorMap(OpBuilder &b, Location loc, TmaOperand operand,
                              bool share, Value map) const {
  // As the runtime encodes the maps (runtime/lib/TensorMaps.cpp): 128B
  // swizzle for the operands, none for the scales, 256B L2 promotion, zero
  // fill. The lowering reads only the map's address; the type documents it.
  bool operandTile = operand == TmaOperand::a || operand == TmaOperand::b;
  auto type = nvgpu::TensorMapDescriptorType::get(
      ctx, tileType(operand, share),
      operandTile ? nvgpu::TensorMapSwizzleKind::SWIZZLE_128B
                  : nvgpu::TensorMapSwizzleKind::SWIZZLE_NONE,
      nvgpu::TensorMapL2PromoKind::L2PROMO_256B,
      nvgpu::TensorMapOOBKind::OOB_ZERO,
      nvgpu::TensorMapInterleaveKind::INTERLEAVE_NONE);
  return b.create<UnrealizedConversionCastOp>(loc, type, map).getResult(0);
}

Value NVGPUEmitter::index(OpBuilder &b, Location loc, Value v) const {
  return b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), v);
}
