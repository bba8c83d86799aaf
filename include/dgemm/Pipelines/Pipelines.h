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

#include <string>

namespace mlir::dgemm {

/// The pipeline's options: PipelineOptions.def, each forwarded to
/// dgemm-select-config.
struct DGemmPipelineOptions
    : public PassPipelineOptions<DGemmPipelineOptions> {
#define DGEMM_PIPELINE_OPTION(TYPE, FIELD, FLAG, DEFAULT, HELP)                \
  Option<TYPE> FIELD{*this, FLAG, llvm::cl::desc(HELP),                        \
                     llvm::cl::init(DEFAULT)};
#include "dgemm/Pipelines/PipelineOptions.def"
};

/// dgemm-select-config, dgemm-lower-to-kernel, dgemm-place-sync,
/// dgemm-verify-sync, convert-dgemm-to-nvgpu, upstream convert-nvgpu-to-nvvm,
/// convert-dgemm-to-nvvm, then the upstream conversions to the LLVM dialect
/// (scf, arith, cf, nvvm inline PTX).
void buildDGemmToLLVMPipeline(OpPassManager &pm,
                              const DGemmPipelineOptions &options);

/// Registers the pipeline as `dgemm-to-llvm`.
void registerDGemmPipelines();

} // namespace mlir::dgemm

#endif // DGEMM_PIPELINES_PIPELINES_H
