//===- DGemmToNVVM.cpp - Lower dgemm kernels to NVVM ----------------------===//
//
// Each dgemm.kernel becomes an llvm.func kernel; the dgemm ops that
// convert-dgemm-to-nvgpu left become NVVM operations (mbarrier waits, wgmma,
// proxy fences, setmaxregister) and LLVM arithmetic, one conversion pattern
// per op (KernelLowering.h lists the pattern files). `tensormap.replace`, which
// NVVM has no op for, is emitted as inline PTX. arith and scf are left to the
// upstream conversions that follow in the pipeline.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dgemm {
#define GEN_PASS_DEF_CONVERTDGEMMTONVVM
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvvm_lowering;

namespace {
/// The attribute a kernel function carries while its ops are converted.
constexpr StringLiteral kConfigAttrName = "dgemm.config";

/// dgemm.kernel -> llvm.func marked nvvm.kernel, its body moved over.
struct KernelOpLowering : OpConversionPattern<KernelOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(KernelOp kernel, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MLIRContext *ctx = kernel.getContext();
    Block &entry = kernel.getBody().front();
    auto fnType =
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                    llvm::to_vector(entry.getArgumentTypes()));
    rewriter.setInsertionPoint(kernel);
    auto func = rewriter.create<LLVM::LLVMFuncOp>(kernel.getLoc(),
                                                  kernel.getSymName(), fnType);
    ConfigAttr config = kernel.getConfig();
    func->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                  rewriter.getUnitAttr());
    func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                  rewriter.getDenseI32ArrayAttr(
                      {static_cast<int32_t>(config.getThreads()), 1, 1}));
    func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  rewriter.getI32IntegerAttr(1));
    func->setAttr(kConfigAttrName, config);
    // Tensor maps travel by value as __grid_constant__ parameters, so TMA can
    // read them in place (docs/KernelABI.md).
    for (unsigned i = KernelOp::TmapA; i <= KernelOp::TmapD; ++i) {
      func.setArgAttr(
          i, LLVM::LLVMDialect::getByValAttrName(),
          TypeAttr::get(LLVM::LLVMArrayType::get(rewriter.getI8Type(), 128)));
      func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      rewriter.getI64IntegerAttr(64));
      func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                      rewriter.getUnitAttr());
    }
    rewriter.inlineRegionBefore(kernel.getBody(), func.getBody(), func.end());
    rewriter.setInsertionPointToEnd(&func.getBody().front());
    rewriter.create<LLVM::ReturnOp>(kernel.getLoc(), ValueRange{});
    rewriter.eraseOp(kernel);
    return success();
  }
};

/// Converts the ops of one phase: `Ops` are illegal, everything else is left
/// alone. Conversion runs without rollback: the patterns read the IR that
/// earlier phases (and earlier ops of their own phase) left, as the phase
/// order below requires.
template <typename... Ops>
LogicalResult convertPhase(Operation *root,
                           const FrozenRewritePatternSet &patterns) {
  ConversionTarget target(*root->getContext());
  target.addLegalDialect<DGemmDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                         arith::ArithDialect, scf::SCFDialect>();
  target.addLegalOp<UnrealizedConversionCastOp>();
  target.addIllegalOp<Ops...>();
  ConversionConfig config;
  config.allowPatternRollback = false;
  config.foldingMode = DialectConversionFoldingMode::Never;
  return applyPartialConversion(root, target, patterns, config);
}

/// The kernel's ops, concern by concern, after convert-dgemm-to-nvgpu lowered
/// the barriers' initialization, the arrives, the TMA loads and the drains.
/// The order is what the patterns assume:
/// - warp_specialize first: it moves the roles' ops into their branches and
///   records the workers' thread count the park patterns read;
/// - dgemm.mma before dgemm.turn: a block's WGMMA operand descriptors are
///   hoisted above the turn's wait that precedes it, past the WGMMAs already
///   lowered for the earlier blocks of the turn;
/// - dgemm.mma before dgemm.promote: a fragment read only by promotions
///   stays the WGMMA's register struct (an unrealized cast marks it);
/// - the epilogue and the park after the promotions and before dgemm.stage:
///   they find the tile's block count through the block loop's structure;
/// - dgemm.stage last: loads and drains read the pipeline iteration through
///   it, and drains create more of it.
LogicalResult convertKernelOps(KernelContext &k) {
  MLIRContext *ctx = k.ctx;
  RewritePatternSet all(ctx);
  populateSkeletonPatterns(k, all);
  populatePipelinePatterns(k, all);
  populateMmaPatterns(k, all);
  populateScalePatterns(k, all);
  populateEpiloguePatterns(k, all);
  populateParkPatterns(k, all);
  populateMGroupedPatterns(k, all);
  FrozenRewritePatternSet patterns(std::move(all));
  Operation *f = k.kernel;
  WalkResult early = f->walk([&](Operation *op) {
    if (!isa<TmaLoadOp, ArriveOp, DescDrainOp>(op))
      return WalkResult::advance();
    op->emitOpError("is lowered by convert-dgemm-to-nvgpu, which runs before "
                    "convert-dgemm-to-nvvm");
    return WalkResult::interrupt();
  });
  if (early.wasInterrupted())
    return failure();
  if (failed(convertPhase<WarpSpecializeOp>(f, patterns)) ||
      failed(convertPhase<DescUpdateOp, DescPublishOp, WaitOp, ProxyFenceOp>(
          f, patterns)) ||
      failed(convertPhase<MmaOp>(f, patterns)) ||
      failed(convertPhase<MmaWaitOp, TurnOp>(f, patterns)) ||
      failed(convertPhase<LoadScalesOp, LoadBlockScaleOp, PromoteOp>(
          f, patterns)) ||
      failed(convertPhase<EpilogueOp, StoreRowsOp, ParkStoreOp, ParkReduceOp>(
          f, patterns)) ||
      failed(convertPhase<StageOp>(f, patterns)))
    return failure();
  // The block-loop marks served the c prefetch's placement.
  k.kernel->walk(
      [](scf::ForOp loop) { loop->removeAttr("dgemm.first_block"); });
  WalkResult left = k.kernel->walk([&](Operation *op) {
    if (isa<DGemmDialect>(op->getDialect())) {
      op->emitOpError("cannot be lowered to NVVM");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(left.wasInterrupted());
}

struct ConvertDGemmToNVVMPass
    : public mlir::dgemm::impl::ConvertDGemmToNVVMBase<ConvertDGemmToNVVMPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (module.getOps<KernelOp>().empty())
      return;
    for (KernelOp kernel : module.getOps<KernelOp>()) {
      unsigned count = 0;
      kernel.walk([&](WarpSpecializeOp) { ++count; });
      if (count != 1) {
        kernel.emitOpError("must hold exactly one dgemm.warp_specialize, has ")
            << count;
        return signalPassFailure();
      }
    }
    declareDynamicSmem(module);
    RewritePatternSet kernels(ctx);
    kernels.add<KernelOpLowering>(ctx);
    if (failed(convertPhase<KernelOp>(
            module, FrozenRewritePatternSet(std::move(kernels)))))
      return signalPassFailure();
    for (auto func : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      auto config = func->getAttrOfType<ConfigAttr>(kConfigAttrName);
      if (!config)
        continue;
      func->removeAttr(kConfigAttrName);
      KernelContext k(func, config);
      if (failed(convertKernelOps(k)))
        return signalPassFailure();
    }
  }
};
} // namespace
