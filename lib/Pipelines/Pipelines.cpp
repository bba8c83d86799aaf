//===- Pipelines.cpp - The dgemm compilation pipeline ---------------------===//

#include "dgemm/Pipelines/Pipelines.h"

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::dgemm::buildDGemmToLLVMPipeline(
    OpPassManager &pm, const DGemmPipelineOptions &options) {
  DGemmSelectConfigOptions select;
#define DGEMM_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, HELP)                \
  select.FIELD = options.FIELD;
#include "dgemm/Pipelines/PipelineOptions.def"
  pm.addPass(createDGemmSelectConfig(select));
  pm.addPass(createDGemmLowerToKernel());
  pm.addPass(createDGemmPlaceSync());
  // Race demonstrations exist to show the races on the GPU; the verifier
  // would (rightly) reject them.
  if (options.unsafe.empty())
    pm.addPass(createDGemmVerifySync());
  pm.addPass(createConvertDGemmToNVGPU());
  pm.addPass(createConvertNVGPUToNVVMPass());
  pm.addPass(createConvertDGemmToNVVM());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::dgemm::registerDGemmPipelines() {
  PassPipelineRegistration<DGemmPipelineOptions>(
      "dgemm-to-llvm", "Lowers dgemm descriptions to LLVM-dialect NVVM kernels",
      buildDGemmToLLVMPipeline);
}
