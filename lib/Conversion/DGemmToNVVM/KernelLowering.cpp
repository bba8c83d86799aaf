//===- KernelLowering.cpp - Shared emitters of the dgemm-to-NVVM patterns -===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

void nvvm_lowering::declareDynamicSmem(ModuleOp module) {
  if (module.lookupSymbol(kSmemSymbol))
    return;
  OpBuilder b(module.getContext());
  b.setInsertionPointToStart(module.getBody());
  b.create<LLVM::GlobalOp>(module.getLoc(),
                           LLVM::LLVMArrayType::get(b.getI8Type(), 0),
                           /*isConstant=*/false, LLVM::Linkage::External,
                           kSmemSymbol, Attribute(), /*alignment=*/1024,
                           /*addrSpace=*/3);
}

KernelContext::KernelContext(Operation *kernel, ConfigAttr config)
    : kernel(kernel), config(config),
      layout(::dgemm::heuristics::smemLayoutFor(toHeuristicsConfig(config))),
      ctx(kernel->getContext()), quadB(config.getQuadB() != 0),
      inPlace(config.isInPlace()),
      reduce(config.isInPlace() ||
             config.getEpilogue() == KernelEpilogue::Reduction),
      reduceMaxBlocks(config.isInPlace() ? 0 : config.getRedMaxBlocks()),
      redVectorWidth(!config.isInPlace() && config.getClusterM() == 2 ? 2 : 4) {
}

Value KernelEmitter::smemAt(OpBuilder &b, Location loc, Value offset) const {
  Value base = b.create<LLVM::AddressOfOp>(loc, smemPtr(), kSmemSymbol);
  return b.create<LLVM::GEPOp>(loc, smemPtr(), b.getI8Type(), base,
                               ValueRange{offset});
}

Value KernelEmitter::stageBuffer(OpBuilder &b, Location loc, int64_t base,
                                 int64_t bytes, Value stage) const {
  Value off = b.create<LLVM::MulOp>(loc, stage, i32(b, loc, bytes));
  off = b.create<LLVM::AddOp>(loc, off, i32(b, loc, base));
  return smemAt(b, loc, off);
}

Value KernelEmitter::barrier(OpBuilder &b, Location loc, BarrierKind kind,
                             Value stage) const {
  // The park has one slot (its ops' verifiers): one pair of barriers.
  if (kind == BarrierKind::park_full || kind == BarrierKind::park_empty)
    return parkBarrier(b, loc, kind == BarrierKind::park_full);
  return stageBuffer(
      b, loc, kind == BarrierKind::full ? layout.fullBase : layout.emptyBase, 8,
      stage);
}

Value KernelEmitter::clusterRank(OpBuilder &b, Location loc) const {
  Value cta = b.create<NVVM::BlockIdXOp>(loc, b.getI32Type());
  return b.create<LLVM::URemOp>(loc, cta, i32(b, loc, config.getClusterM()));
}

void KernelEmitter::clusterSync(OpBuilder &b, Location loc) const {
  inlinePtx(b, loc,
            "barrier.cluster.arrive.release;\n\t"
            "barrier.cluster.wait.acquire;",
            "~{memory}", ValueRange{});
}

Value KernelEmitter::slotAddress(OpBuilder &b, Location loc, TmaOperand operand,
                                 Value slot) const {
  Value cta = b.create<NVVM::BlockIdXOp>(loc, b.getI32Type());
  Value idx =
      b.create<LLVM::MulOp>(loc, cta, i32(b, loc, config.getDescSlots()));
  idx = b.create<LLVM::AddOp>(loc, idx, slot);
  idx = b.create<LLVM::MulOp>(loc, idx, i32(b, loc, 2));
  idx = b.create<LLVM::AddOp>(loc, idx,
                              i32(b, loc, operand == TmaOperand::a ? 0 : 1));
  Value off = b.create<LLVM::ZExtOp>(loc, b.getI64Type(), idx);
  off = b.create<LLVM::MulOp>(loc, off, i64(b, loc, 128));
  return b.create<LLVM::GEPOp>(loc, globalPtr(), b.getI8Type(),
                               arg(KernelOp::PtrWorkspace), ValueRange{off});
}

void KernelEmitter::inlinePtx(OpBuilder &b, Location loc, StringRef ptx,
                              StringRef constraints,
                              ValueRange operands) const {
  b.create<LLVM::InlineAsmOp>(loc, TypeRange{}, operands, ptx, constraints,
                              /*has_side_effects=*/true,
                              /*is_align_stack=*/false,
                              LLVM::TailCallKind::None, LLVM::AsmDialectAttr(),
                              ArrayAttr());
}

/// Written out rather than nvvm.mbarrier.try_wait.parity: MLIR 22 lowers
/// that op to `@P1 bra.uni`, asserting that every lane of the warp sees the
/// same try_wait result, which PTX does not promise (a lane may time out of
/// try_wait while another sees completion). A mispredicted uniform branch
/// leaves lanes that have not acquired the phase running ahead into
/// wgmma.*.sync.aligned. A plain `bra` lets ptxas reconverge the warp first.
void KernelEmitter::waitParity(OpBuilder &b, Location loc, Value bar,
                               Value parity) const {
  Value addr = b.create<LLVM::PtrToIntOp>(loc, b.getI32Type(), bar);
  b.create<LLVM::InlineAsmOp>(
      loc, TypeRange{}, ValueRange{addr, parity, i32(b, loc, 0x989680)},
      "{\n\t.reg .pred p;\n\twait:\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [$0], $1, $2;\n\t"
      "@p bra done;\n\tbra wait;\n\tdone:\n\t}",
      "r,r,r,~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::TailCallKind::None, LLVM::AsmDialectAttr(), ArrayAttr());
}

void KernelEmitter::recordUse(OpBuilder &b, Location loc, Value slot,
                              Value it) const {
  for (auto [r, cell] : llvm::enumerate(k.lastUse)) {
    Value old = b.create<LLVM::LoadOp>(loc, b.getI32Type(), cell);
    Value hit = b.create<LLVM::ICmpOp>(loc, LLVM::ICmpPredicate::eq, slot,
                                       i32(b, loc, r));
    b.create<LLVM::StoreOp>(loc, b.create<LLVM::SelectOp>(loc, hit, it, old),
                            cell);
  }
}

Value KernelEmitter::parkBarrier(OpBuilder &b, Location loc, bool full) const {
  return smemAt(
      b, loc,
      i32(b, loc, full ? layout.parkFullBarrier : layout.parkEmptyBarrier));
}

Value KernelEmitter::parkSwizzle(OpBuilder &b, Location loc, Value row) const {
  return b.create<arith::MulIOp>(
      loc, b.create<arith::AndIOp>(loc, row, i32(b, loc, 3)), i32(b, loc, 2));
}

Value KernelEmitter::parkRecord(OpBuilder &b, Location loc) const {
  return smemAt(b, loc, i32(b, loc, layout.parkRecord));
}

std::pair<Value, Value> KernelEmitter::tileCounts(OpBuilder &b,
                                                  Location loc) const {
  auto ceilDiv = [&](Value v, int64_t d) {
    return b
        .create<arith::DivUIOp>(
            loc, b.create<arith::AddIOp>(loc, v, i32(b, loc, d - 1)),
            i32(b, loc, d))
        .getResult();
  };
  return {ceilDiv(arg(KernelOp::DimM), config.getBlockM()),
          ceilDiv(arg(KernelOp::DimN), config.getBlockN())};
}

Value nvvm_lowering::mathWarpgroup(OpBuilder &b, Location loc, Value tid) {
  Value wg = b.create<arith::DivUIOp>(
      loc, tid, b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 128));
  return b.create<arith::SubIOp>(
      loc, wg, b.create<arith::ConstantIntOp>(loc, b.getI32Type(), 1));
}

Fragment nvvm_lowering::fragmentOf(OpBuilder &b, Location loc, Value tid,
                                   bool quads) {
  auto c = [&](int64_t v) {
    return b.create<arith::ConstantIntOp>(loc, b.getI32Type(), v);
  };
  Value wg = mathWarpgroup(b, loc, tid);
  Value inWg = b.create<arith::RemUIOp>(loc, tid, c(128));
  Value warp = b.create<arith::DivUIOp>(loc, inWg, c(32));
  Value lane = b.create<arith::RemUIOp>(loc, tid, c(32));
  Value row = b.create<arith::AddIOp>(
      loc, b.create<arith::MulIOp>(loc, wg, c(64)),
      b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, warp, c(16)),
                              b.create<arith::DivUIOp>(loc, lane, c(4))));
  Value col = b.create<arith::MulIOp>(
      loc, b.create<arith::RemUIOp>(loc, lane, c(4)), c(quads ? 4 : 2));
  return {row, col, quads};
}

SumPairs::SumPairs(ValueRange tileSums) {
  for (Value sum : tileSums)
    for (int64_t jj = 0;
         jj < cast<VectorType>(sum.getType()).getNumElements() / 4; ++jj)
      groupAt.push_back({sum, jj});
}

Value SumPairs::pair(OpBuilder &b, Location loc, int i, int64_t j) const {
  auto c = [&](int64_t v) {
    return b.create<LLVM::ConstantOp>(loc, b.getI32Type(), v);
  };
  Value v = b.create<LLVM::UndefOp>(loc, VectorType::get({2}, b.getF32Type()));
  auto [sum, jj] = groupAt[j];
  for (int e = 0; e < 2; ++e) {
    Value s = b.create<LLVM::ExtractElementOp>(loc, sum, c(jj * 4 + i * 2 + e));
    v = b.create<LLVM::InsertElementOp>(loc, v, s, c(e));
  }
  return v;
}
