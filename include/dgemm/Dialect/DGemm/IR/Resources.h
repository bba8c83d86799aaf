//===- Resources.h - Kernel resources and their accesses --------*- C++ -*-===//
//
// The vocabulary of the hazard model: which resource an operation touches,
// whether it reads or writes it, and through which memory proxy.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_DIALECT_DGEMM_IR_RESOURCES_H
#define DGEMM_DIALECT_DGEMM_IR_RESOURCES_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::dgemm {

enum class ResourceKind {
  /// One operand's buffer in a shared-memory pipeline stage; `index` is the
  /// stage (an i32 value produced by dgemm.stage).
  StageA,
  StageB,
  StageSFA,
  StageSFB,
  /// A tensor-map descriptor slot in global memory; `index` is the slot.
  DescSlotA,
  DescSlotB,
  /// WGMMA accumulator registers; `index` is the accumulator SSA value.
  Accumulator,
  /// A slot of the park, the shared-memory tile the math warpgroups hand to
  /// the producer warpgroup's workers; `index` is the slot (an i32 value
  /// produced by dgemm.stage).
  Park,
};

enum class AccessKind { Read, Write };

/// Generic: ordinary loads/stores of the executing thread. Async: the TMA unit
/// or the tensor cores, which complete later and are observed only through
/// mbarriers, wgmma.wait_group or tensormap fences.
enum class Proxy { Generic, Async };

struct ResourceAccess {
  ResourceKind kind;
  Value index;
  AccessKind access;
  Proxy proxy;
  /// Bytes an async write delivers (TMA transaction count); 0 otherwise.
  int64_t bytes = 0;
};

inline bool isStage(ResourceKind k) {
  return k == ResourceKind::StageA || k == ResourceKind::StageB ||
         k == ResourceKind::StageSFA || k == ResourceKind::StageSFB;
}
inline bool isDescSlot(ResourceKind k) {
  return k == ResourceKind::DescSlotA || k == ResourceKind::DescSlotB;
}
llvm::StringRef stringifyResourceKind(ResourceKind kind);

} // namespace mlir::dgemm

#endif // DGEMM_DIALECT_DGEMM_IR_RESOURCES_H
