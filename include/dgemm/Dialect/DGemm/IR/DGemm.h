//===- DGemm.h - The dgemm dialect --------------------------------*- C++ -*-===//

#ifndef DGEMM_DIALECT_DGEMM_IR_DGEMM_H
#define DGEMM_DIALECT_DGEMM_IR_DGEMM_H

#include "dgemm/Dialect/DGemm/IR/Resources.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dgemm/Dialect/DGemm/IR/DGemmOpsDialect.h.inc"
#include "dgemm/Dialect/DGemm/IR/DGemmEnums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "dgemm/Dialect/DGemm/IR/DGemmAttributes.h.inc"
#include "dgemm/Dialect/DGemm/IR/DGemmInterfaces.h.inc"
#define GET_OP_CLASSES
#include "dgemm/Dialect/DGemm/IR/DGemmOps.h.inc"

namespace dgemm::heuristics {
struct KernelConfig;
struct Bf16Problem;
} // namespace dgemm::heuristics

namespace mlir::dgemm {
/// Bridges between the config attribute and the MLIR-free heuristics library.
::dgemm::heuristics::KernelConfig toHeuristicsConfig(ConfigAttr attr);
ConfigAttr toConfigAttr(MLIRContext *ctx,
                        const ::dgemm::heuristics::KernelConfig &config);
/// The heuristics' problem of a BF16 description; an extent given as `?`
/// takes DeepGEMM's benchmark shape (M 4096, or 8 groups of 4096 rows
/// for contiguous, 256 per group for masked; N 4096; K 7168).
::dgemm::heuristics::Bf16Problem bf16ProblemOf(GemmOp gemm);
} // namespace mlir::dgemm

#endif // DGEMM_DIALECT_DGEMM_IR_DGEMM_H
