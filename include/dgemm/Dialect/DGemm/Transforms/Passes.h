//===- Passes.h - dgemm passes ------------------------------------*- C++ -*-===//

#ifndef DGEMM_DIALECT_DGEMM_TRANSFORMS_PASSES_H
#define DGEMM_DIALECT_DGEMM_TRANSFORMS_PASSES_H

#include "dgemm/Dialect/DGemm/IR/DGemm.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::dgemm {

#define GEN_PASS_DECL
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"

} // namespace mlir::dgemm

#endif // DGEMM_DIALECT_DGEMM_TRANSFORMS_PASSES_H
