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
  select.numSMs = options.numSMs;
  select.smemBytes = options.smemBytes;
  select.descSlots = options.descSlots;
  select.clusterM = options.clusterM;
  select.quadB = options.quadB;
  pm.addPass(createDGemmSelectConfig(select));
  DGemmLowerToKernelOptions lower;
  lower.scaleRegisterBudget = options.scaleRegisterBudget;
  lower.mmaSlices = options.mmaSlices;
  lower.scalesBeforeMma = options.scalesBeforeMma;
  lower.alternateWarpgroups = options.alternateWarpgroups;
  lower.passAfterIssue = options.passTurnAfterIssue;
  lower.prefetchNextC = options.prefetchNextC;
  lower.blocksPerTurn = options.blocksPerTurn;
  lower.overlapPromotion = options.overlapPromotion;
  lower.deferEpilogue = options.deferEpilogue;
  lower.reloadSfaAfterTurn = options.reloadSfaAfterTurn;
  lower.narrowTailMma = options.narrowTailMma;
  lower.scalePrefixCols = options.scalePrefixCols;
  pm.addPass(createDGemmLowerToKernel(lower));
  DGemmPlaceSyncOptions place;
  place.skipDescriptorDrain = options.skipDescriptorDrain;
  place.releasePerThread = options.releasePerThread;
  place.waitBeforeTurn = options.waitBeforeTurn;
  place.skipProxyFence = options.skipProxyFence;
  pm.addPass(createDGemmPlaceSync(place));
  // The unsafe variants exist to show the races on the GPU; the verifier
  // would (rightly) reject them.
  if (!options.skipDescriptorDrain && !options.skipProxyFence)
    pm.addPass(createDGemmVerifySync());
  ConvertDGemmToNVVMOptions convert;
  convert.perChunkEpilogue = options.perChunkEpilogue;
  convert.tmaReduceEpilogue = options.tmaReduceEpilogue;
  convert.redEpilogue = options.redEpilogue;
  convert.redEpilogueMaxBlocks = options.redEpilogueMaxBlocks;
  convert.redVectorWidth = options.redVectorWidth;
  convert.epilogueChunkCols = options.epilogueChunkCols;
  convert.prefetchCBlocks = options.prefetchCBlocks;
  convert.prefetchCMaxBlocks = options.prefetchCMaxBlocks;
  convert.inPlacePrefetchMaxBlocks = options.inPlacePrefetchMaxBlocks;
  convert.turnPassPending = options.turnPassPending;
  convert.epilogueVectorWidth = options.epilogueVectorWidth;
  convert.mmaSetupBeforeTurn = options.mmaSetupBeforeTurn;
  convert.unscaledPromotion = options.unscaledPromotion;
  convert.skipEpilogue = options.skipEpilogue;
  convert.sfbStride = options.sfbStride;
  convert.sfbVec4 = options.sfbVec4;
  convert.uniformWarpgroup = options.uniformWarpgroup;
  pm.addPass(createConvertDGemmToNVVM(convert));
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
      "dgemm-to-llvm",
      "Lowers dgemm descriptions to LLVM-dialect NVVM kernels",
      buildDGemmToLLVMPipeline);
}
