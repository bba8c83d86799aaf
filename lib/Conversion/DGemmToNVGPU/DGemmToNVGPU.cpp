//===- DGemmToNVGPU.cpp - Lower dgemm kernel ops to upstream NVGPU --------===//
//
// The first of the kernel's two conversions: the ops that upstream nvgpu
// expresses as dgemm needs them (barrier initialization, arrives, multicast
// TMA loads) become nvgpu ops,
// which upstream convert-nvgpu-to-nvvm lowers; convert-dgemm-to-nvvm lowers
// the rest. docs/UpstreamNVGPU.md says which ops stay dgemm's and why.
//
//===----------------------------------------------------------------------===//

#include "NVGPUPatterns.h"

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"

#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::dgemm {
#define GEN_PASS_DEF_CONVERTDGEMMTONVGPU
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;
using namespace mlir::dgemm::nvgpu_lowering;

void nvgpu_lowering::populateDGemmToNVGPUPatterns(
    KernelContext &k, const LLVMTypeConverter &converter,
    RewritePatternSet &patterns) {
  populateBarrierInitPatterns(k, converter, patterns);
  populateArrivePatterns(k, converter, patterns);
  populateTmaLoadPatterns(k, converter, patterns);
}

namespace {
/// Checks the arrival counts dgemm-place-sync recorded on the kernel's
/// dgemm.warp_specialize and takes the releases' arrival mode from them.
LogicalResult readArrivals(KernelContext &k, WarpSpecializeOp ws) {
  if (!ws.getFullArrivalsAttr() || !ws.getEmptyArrivalsAttr())
    return ws.emitError("barrier arrival counts are missing: run "
                        "dgemm-place-sync before convert-dgemm-to-nvgpu");
  int64_t perWarp = 4 * k.config.getMathWarpgroups();
  if (*ws.getEmptyArrivals() != perWarp &&
      *ws.getEmptyArrivals() != 32 * perWarp)
    return ws.emitError("empty-barrier arrival count ")
           << *ws.getEmptyArrivals()
           << " is neither one per math warp nor one per math thread";
  // Math-role releases: one arrive per warp, else per thread.
  k.releasePerWarp = *ws.getEmptyArrivals() == perWarp;
  if (!ws.getWorkers().empty() &&
      (!ws.getParkFullArrivals() || !ws.getParkEmptyArrivals()))
    return ws.emitError("the workers role has no park arrival counts: "
                        "dgemm-place-sync records them when one role "
                        "writes the park and another reads it");
  return success();
}

LogicalResult convertKernel(KernelOp kernel) {
  MLIRContext *ctx = kernel.getContext();
  SmallVector<WarpSpecializeOp> roles;
  kernel.walk([&](WarpSpecializeOp ws) { roles.push_back(ws); });
  if (roles.size() != 1)
    return kernel.emitOpError("must hold exactly one dgemm.warp_specialize, "
                              "has ")
           << roles.size();
  KernelContext k(kernel, kernel.getConfig());
  if (failed(readArrivals(k, roles.front())))
    return failure();
  createDescriptorCells(k);

  // The views are built as the upstream lowering will read them.
  LLVMTypeConverter converter(ctx);
  nvgpu::populateCommonGPUTypeAndAttributeConversions(converter);
  RewritePatternSet patterns(ctx);
  populateDGemmToNVGPUPatterns(k, converter, patterns);

  ConversionTarget target(*ctx);
  target.addLegalDialect<DGemmDialect, nvgpu::NVGPUDialect, LLVM::LLVMDialect,
                         NVVM::NVVMDialect, arith::ArithDialect,
                         scf::SCFDialect>();
  target.addLegalOp<UnrealizedConversionCastOp>();
  target.addIllegalOp<TmaLoadOp, ArriveOp, DescDrainOp>();
  // Legal once its barriers are initialized (its arrival counts spent).
  target.addDynamicallyLegalOp<WarpSpecializeOp>(
      [](WarpSpecializeOp ws) { return !ws.getFullArrivalsAttr(); });
  // The patterns read the IR as the earlier ops' patterns left it (a load's
  // stage is still a dgemm.stage).
  ConversionConfig config;
  config.allowPatternRollback = false;
  config.foldingMode = DialectConversionFoldingMode::Never;
  return applyPartialConversion(kernel, target, std::move(patterns), config);
}

struct ConvertDGemmToNVGPUPass
    : public mlir::dgemm::impl::ConvertDGemmToNVGPUBase<
          ConvertDGemmToNVGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (module.getOps<KernelOp>().empty())
      return;
    nvvm_lowering::declareDynamicSmem(module);
    for (KernelOp kernel : module.getOps<KernelOp>())
      if (failed(convertKernel(kernel)))
        return signalPassFailure();
  }
};
} // namespace
