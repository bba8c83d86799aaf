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

/// How writeBundle assembles each kernel into a cubin beside its PTX.
struct BundleOptions {
  /// Every configuration the heuristics can choose (false: only the ones the
  /// input's descriptions select).
  bool allCandidates = true;
  /// ptxas to run (-arch=<chip>): a path, "" to look for one (the
  /// configure-time DGEMM_PTXAS_PATH, then PATH), or "none" for PTX only.
  /// Not found: PTX only, with a warning.
  std::string ptxas;
};

/// Translates a module already in the LLVM dialect (with NVVM) to LLVM IR,
/// optimizes it and emits PTX through the NVPTX backend.
LogicalResult emitPTX(ModuleOp module, llvm::raw_ostream &os,
                      const PTXOptions &options = {});

/// Runs the dgemm pipeline on a module of descriptions, then emitPTX.
LogicalResult compileToPTX(ModuleOp module, llvm::raw_ostream &os,
                           const DGemmPipelineOptions &pipeline,
                           const PTXOptions &options = {});

/// Writes a kernel bundle (docs/KernelABI.md) to `dir`: for every
/// configuration the heuristics can choose -- or, without
/// `bundle.allCandidates`, for each one in the input's descriptions --
/// `<entry>.ptx`, `<entry>.meta` and, where ptxas is found, `<entry>.cubin`;
/// then, last, `index.txt` with the commit, versions and checksums (a bundle
/// without it is incomplete). An earlier index.txt is removed first.
LogicalResult writeBundle(ModuleOp module, llvm::StringRef dir,
                          const BundleOptions &bundle,
                          const DGemmPipelineOptions &pipeline,
                          const PTXOptions &options = {});

/// FNV-1a, 64-bit, of `data`: the bundle index's checksum (the runtime
/// computes the same, runtime/lib/KernelBundle.cpp).
uint64_t fnv1a64(llvm::StringRef data);

void registerPTXTranslation();

} // namespace mlir::dgemm

#endif // DGEMM_TARGET_PTX_PTXEMITTER_H
