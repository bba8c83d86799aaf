//===- PTXEmitter.h - LLVM dialect to PTX --------------------------*- C++ -*-===//

#ifndef DGEMM_TARGET_PTX_PTXEMITTER_H
#define DGEMM_TARGET_PTX_PTXEMITTER_H

#include "dgemm/Pipelines/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::dgemm {

struct PTXOptions {
  std::string chip = "sm_90a";
  /// PTX 8.6: tensormap proxy fences and tensormap.replace need >= 8.3.
  std::string features = "+ptx86";
  int optLevel = 3;
};

/// Translates a module already in the LLVM dialect (with NVVM) to LLVM IR,
/// optimizes it and emits PTX through the NVPTX backend.
LogicalResult emitPTX(ModuleOp module, llvm::raw_ostream &os,
                      const PTXOptions &options = {});

/// Runs the dgemm pipeline on a module of descriptions, then emitPTX.
LogicalResult compileToPTX(ModuleOp module, llvm::raw_ostream &os,
                           const DGemmPipelineOptions &pipeline,
                           const PTXOptions &options = {});

/// Writes a kernel bundle (docs/KernelABI.md) to `dir`: for each
/// configuration in the input's descriptions -- or, with `allCandidates`,
/// for every configuration the heuristics can choose -- `<entry>.ptx`,
/// `<entry>.meta`, and `index.txt`.
LogicalResult writeBundle(ModuleOp module, llvm::StringRef dir,
                          bool allCandidates,
                          const DGemmPipelineOptions &pipeline,
                          const PTXOptions &options = {});

void registerPTXTranslation();

} // namespace mlir::dgemm

#endif // DGEMM_TARGET_PTX_PTXEMITTER_H
