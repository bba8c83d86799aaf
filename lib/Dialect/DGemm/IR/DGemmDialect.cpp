//===- DGemmDialect.cpp - The dgemm dialect -------------------------------===//

#include "dgemm/Dialect/DGemm/IR/DGemm.h"

#include "dgemm/Heuristics/KernelConfig.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::dgemm;
namespace heur = ::dgemm::heuristics;

#include "dgemm/Dialect/DGemm/IR/DGemmOpsDialect.cpp.inc"
#include "dgemm/Dialect/DGemm/IR/DGemmEnums.cpp.inc"
#include "dgemm/Dialect/DGemm/IR/DGemmInterfaces.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "dgemm/Dialect/DGemm/IR/DGemmAttributes.cpp.inc"

void DGemmDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dgemm/Dialect/DGemm/IR/DGemmAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dgemm/Dialect/DGemm/IR/DGemmOps.cpp.inc"
      >();
}

StringRef mlir::dgemm::stringifyResourceKind(ResourceKind kind) {
  switch (kind) {
  case ResourceKind::StageA:
    return "stage A buffer";
  case ResourceKind::StageB:
    return "stage B buffer";
  case ResourceKind::StageSFA:
    return "stage sfa buffer";
  case ResourceKind::StageSFB:
    return "stage sfb buffer";
  case ResourceKind::DescSlotA:
    return "A descriptor slot";
  case ResourceKind::DescSlotB:
    return "B descriptor slot";
  case ResourceKind::Accumulator:
    return "accumulator";
  case ResourceKind::Park:
    return "park slot";
  }
  llvm_unreachable("unknown resource kind");
}

//===----------------------------------------------------------------------===//
// ConfigAttr
//===----------------------------------------------------------------------===//

static heur::KernelConfig
toHeuristicsConfig(int64_t blockM, int64_t blockN, int64_t blockK,
                   int64_t stages, int64_t descSlots, int64_t mathWarpgroups,
                   int64_t clusterM, int64_t clusterN, int64_t swizzleA,
                   int64_t swizzleB, int64_t numSMs, int64_t redMaxBlocks,
                   int64_t inPlaceOnly, int64_t quadB, int64_t park) {
  heur::KernelConfig c;
  c.blockM = blockM;
  c.blockN = blockN;
  c.blockK = blockK;
  c.stages = stages;
  c.descSlots = descSlots;
  c.mathWarpgroups = mathWarpgroups;
  c.clusterM = clusterM;
  c.clusterN = clusterN;
  c.swizzleA = swizzleA;
  c.swizzleB = swizzleB;
  c.numSMs = numSMs;
  c.redMaxBlocks = redMaxBlocks;
  c.inPlaceOnly = inPlaceOnly;
  c.quadB = quadB;
  c.park = park;
  return c;
}

heur::KernelConfig mlir::dgemm::toHeuristicsConfig(ConfigAttr attr) {
  return ::toHeuristicsConfig(
      attr.getBlockM(), attr.getBlockN(), attr.getBlockK(), attr.getStages(),
      attr.getDescSlots(), attr.getMathWarpgroups(), attr.getClusterM(),
      attr.getClusterN(), attr.getSwizzleA(), attr.getSwizzleB(),
      attr.getNumSms(), attr.getRedMaxBlocks(), attr.getInPlaceOnly(),
      attr.getQuadB(), attr.getPark());
}

ConfigAttr mlir::dgemm::toConfigAttr(MLIRContext *ctx,
                                     const heur::KernelConfig &c) {
  return ConfigAttr::get(ctx, c.blockM, c.blockN, c.blockK, c.stages,
                         c.descSlots, c.mathWarpgroups, c.clusterM, c.clusterN,
                         c.swizzleA, c.swizzleB, c.numSMs, c.redMaxBlocks,
                         c.inPlaceOnly, c.quadB, c.park);
}

LogicalResult
ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                   int64_t blockM, int64_t blockN, int64_t blockK,
                   int64_t stages, int64_t descSlots, int64_t mathWarpgroups,
                   int64_t clusterM, int64_t clusterN, int64_t swizzleA,
                   int64_t swizzleB, int64_t numSMs, int64_t redMaxBlocks,
                   int64_t inPlaceOnly, int64_t quadB, int64_t park) {
  // The rules live in the heuristics library so that the runtime applies the
  // very same ones to configurations it is handed.
  heur::Target target;
  std::string problem = heur::checkConfig(
      ::toHeuristicsConfig(blockM, blockN, blockK, stages, descSlots,
                           mathWarpgroups, clusterM, clusterN, swizzleA,
                           swizzleB, numSMs, redMaxBlocks, inPlaceOnly,
                           quadB, park),
      target);
  if (!problem.empty())
    return emitError() << "invalid config: " << problem;
  return success();
}

int64_t ConfigAttr::getSmemBytes() const {
  return mlir::dgemm::toHeuristicsConfig(*this).smemBytes();
}

std::string ConfigAttr::getEntryName() const {
  return mlir::dgemm::toHeuristicsConfig(*this).entryName();
}
