//===- Pipelines.h - The dgemm compilation pipeline ---------------*- C++ -*-===//
//
// The whole lowering, description to LLVM dialect, built from an options
// struct so that dgemm-opt, dgemm-translate and tests share one definition.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_PIPELINES_PIPELINES_H
#define DGEMM_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::dgemm {

struct DGemmPipelineOptions
    : public PassPipelineOptions<DGemmPipelineOptions> {
  Option<int> numSMs{*this, "num-sms", llvm::cl::desc("Target SM count"),
                     llvm::cl::init(132)};
  Option<int> smemBytes{*this, "smem-bytes",
                        llvm::cl::desc("Target shared memory per block"),
                        llvm::cl::init(232448)};
  Option<int> descSlots{*this, "desc-slots",
                        llvm::cl::desc("Descriptor slots per operand (0: the "
                                       "heuristic's choice)"),
                        llvm::cl::init(0)};
  Option<int> clusterM{*this, "cluster-m",
                       llvm::cl::desc("CTAs per cluster along M sharing the B "
                                      "tile (0: the heuristic's choice)"),
                       llvm::cl::init(0)};
  Option<int> quadB{*this, "quad-b",
                    llvm::cl::desc("See dgemm-select-config"),
                    llvm::cl::init(-1)};
  Option<int> scaleRegisterBudget{
      *this, "scale-register-budget",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(202)};
  Option<int> mmaSlices{*this, "mma-slices",
                        llvm::cl::desc("See dgemm-lower-to-kernel"),
                        llvm::cl::init(1)};
  Option<bool> scalesBeforeMma{*this, "scales-before-mma",
                               llvm::cl::desc("See dgemm-lower-to-kernel"),
                               llvm::cl::init(true)};
  Option<bool> alternateWarpgroups{
      *this, "alternate-warpgroups",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(true)};
  Option<bool> passTurnAfterIssue{
      *this, "pass-turn-after-issue",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(false)};
  Option<bool> prefetchNextC{
      *this, "prefetch-next-c",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(false)};
  Option<int64_t> blocksPerTurn{
      *this, "blocks-per-turn",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(2)};
  Option<int64_t> scalePrefixCols{
      *this, "scale-prefix-cols",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(0)};
  Option<bool> deferEpilogue{
      *this, "defer-epilogue",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(false)};
  Option<bool> reloadSfaAfterTurn{
      *this, "reload-sfa-after-turn",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(false)};
  Option<bool> overlapPromotion{
      *this, "overlap-promotion",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(false)};
  Option<bool> narrowTailMma{
      *this, "narrow-tail-mma",
      llvm::cl::desc("See dgemm-lower-to-kernel"), llvm::cl::init(false)};
  Option<bool> releasePerThread{
      *this, "release-per-thread",
      llvm::cl::desc("Every math thread arrives on empty barriers"),
      llvm::cl::init(false)};
  Option<bool> perChunkEpilogue{
      *this, "per-chunk-epilogue",
      llvm::cl::desc("Per-chunk guarded epilogue (slower; for comparison)"),
      llvm::cl::init(false)};
  Option<bool> tmaReduceEpilogue{
      *this, "tma-reduce-epilogue",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(false)};
  Option<bool> redEpilogue{
      *this, "red-epilogue",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(false)};
  Option<int64_t> redEpilogueMaxBlocks{
      *this, "red-epilogue-max-blocks",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(0)};
  Option<int64_t> redVectorWidth{
      *this, "red-vector-width",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(0)};
  Option<int64_t> epilogueChunkCols{
      *this, "epilogue-chunk-cols",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(16)};
  Option<int64_t> prefetchCBlocks{
      *this, "prefetch-c-blocks",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(4)};
  Option<int64_t> prefetchCMaxBlocks{
      *this, "prefetch-c-max-blocks",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(0)};
  Option<int64_t> inPlacePrefetchMaxBlocks{
      *this, "in-place-prefetch-max-blocks",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(8)};
  Option<bool> waitBeforeTurn{
      *this, "wait-before-turn",
      llvm::cl::desc("See dgemm-place-sync"), llvm::cl::init(false)};
  Option<bool> unscaledPromotion{
      *this, "unsafe-unscaled-promotion",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(false)};
  Option<bool> skipEpilogue{
      *this, "unsafe-skip-epilogue",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(false)};
  Option<int64_t> sfbStride{
      *this, "unsafe-sfb-stride",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(1)};
  Option<bool> sfbVec4{
      *this, "unsafe-sfb-vec4",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(false)};
  Option<bool> mmaSetupBeforeTurn{
      *this, "mma-setup-before-turn",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(true)};
  Option<int64_t> epilogueVectorWidth{
      *this, "epilogue-vector-width",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(2)};
  Option<int64_t> turnPassPending{
      *this, "turn-pass-pending",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(0)};
  Option<bool> uniformWarpgroup{
      *this, "uniform-warpgroup",
      llvm::cl::desc("See convert-dgemm-to-nvvm"), llvm::cl::init(true)};
  Option<bool> skipDescriptorDrain{
      *this, "unsafe-skip-descriptor-drain",
      llvm::cl::desc("TEST ONLY: omit descriptor drains (reproduces the "
                     "DeepGEMM 2.6.1 race)"),
      llvm::cl::init(false)};
  Option<bool> skipProxyFence{
      *this, "unsafe-skip-proxy-fence",
      llvm::cl::desc("TEST ONLY: omit the proxy fence before stage releases "
                     "that follow ld.shared of the stage"),
      llvm::cl::init(false)};
};

/// dgemm-select-config, dgemm-lower-to-kernel, dgemm-place-sync,
/// dgemm-verify-sync, convert-dgemm-to-nvvm, then the upstream conversions to
/// the LLVM dialect (scf, arith, cf, nvvm inline PTX).
void buildDGemmToLLVMPipeline(OpPassManager &pm,
                              const DGemmPipelineOptions &options);

/// Registers the pipeline as `dgemm-to-llvm`.
void registerDGemmPipelines();

} // namespace mlir::dgemm

#endif // DGEMM_PIPELINES_PIPELINES_H
