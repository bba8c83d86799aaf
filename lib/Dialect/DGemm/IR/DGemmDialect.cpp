//===- DGemmDialect.cpp - The dgemm dialect -------------------------------===//

#include "dgemm/Dialect/DGemm/IR/DGemm.h"

#include <limits>

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

static heur::Epilogue toHeuristics(KernelEpilogue e) {
  switch (e) {
  case KernelEpilogue::Register:
    return heur::Epilogue::Register;
  case KernelEpilogue::Reduction:
    return heur::Epilogue::Reduction;
  case KernelEpilogue::InPlace:
    return heur::Epilogue::InPlace;
  case KernelEpilogue::Parked:
    return heur::Epilogue::Parked;
  }
  llvm_unreachable("unknown epilogue");
}

static KernelEpilogue fromHeuristics(heur::Epilogue e) {
  switch (e) {
  case heur::Epilogue::Register:
    return KernelEpilogue::Register;
  case heur::Epilogue::Reduction:
    return KernelEpilogue::Reduction;
  case heur::Epilogue::InPlace:
    return KernelEpilogue::InPlace;
  case heur::Epilogue::Parked:
    return KernelEpilogue::Parked;
  }
  llvm_unreachable("unknown epilogue");
}

static unsigned toHeuristics(UnsafeVariant u) {
  unsigned bits = 0;
  if (bitEnumContainsAll(u, UnsafeVariant::skip_descriptor_drain))
    bits |= unsigned(heur::Unsafe::SkipDescriptorDrain);
  if (bitEnumContainsAll(u, UnsafeVariant::skip_proxy_fence))
    bits |= unsigned(heur::Unsafe::SkipProxyFence);
  return bits;
}

static UnsafeVariant fromHeuristics(unsigned bits) {
  UnsafeVariant u = UnsafeVariant::none;
  if (bits & unsigned(heur::Unsafe::SkipDescriptorDrain))
    u = u | UnsafeVariant::skip_descriptor_drain;
  if (bits & unsigned(heur::Unsafe::SkipProxyFence))
    u = u | UnsafeVariant::skip_proxy_fence;
  return u;
}

namespace {
/// The integer fields of a ConfigAttr, in parameter order.
struct ConfigFields {
  int64_t blockM, blockN, blockK, stages, descSlots, mathWarpgroups, clusterM,
      clusterN, swizzleA, swizzleB, numSMs, redMaxBlocks, quadB;
};
} // namespace

/// The heuristics' config of `f`, or the name of the first field that does
/// not fit the library's 32-bit fields (it would be checked truncated).
static_assert(int(GemmKind::normal) == int(heur::Kind::Normal) &&
                  int(GemmKind::m_grouped_contiguous) ==
                      int(heur::Kind::MGroupedContiguous) &&
                  int(GemmKind::m_grouped_masked) ==
                      int(heur::Kind::MGroupedMasked) &&
                  int(GemmKind::k_grouped_contiguous) ==
                      int(heur::Kind::KGroupedContiguous) &&
                  int(GemmKind::m_grouped_contiguous_psum) ==
                      int(heur::Kind::MGroupedContiguousPsum),
              "the dialect's GemmKind and the heuristics' Kind share values");
static_assert(int(OperandType::fp8) == int(heur::Dtype::Fp8) &&
                  int(OperandType::bf16) == int(heur::Dtype::Bf16) &&
                  int(Majorness::k) == int(heur::Major::K) &&
                  int(Majorness::mn) == int(heur::Major::MN),
              "the dialect's OperandType/Majorness and the heuristics' "
              "Dtype/Major share values");

/// The BF16 family's fields of a ConfigAttr.
struct OperandFields {
  OperandType dtype;
  Majorness majorA, majorB;
  int64_t dF32, accumulate;
};

static std::string toHeuristicsConfig(const ConfigFields &f, GemmKind kind,
                                      KernelEpilogue epilogue,
                                      UnsafeVariant unsafe,
                                      const OperandFields &o,
                                      heur::KernelConfig &c) {
  std::pair<const char *, int64_t> fields[] = {
      {"block_m", f.blockM},       {"block_n", f.blockN},
      {"block_k", f.blockK},       {"stages", f.stages},
      {"desc_slots", f.descSlots}, {"math_warpgroups", f.mathWarpgroups},
      {"cluster_m", f.clusterM},   {"cluster_n", f.clusterN},
      {"swizzle_a", f.swizzleA},   {"swizzle_b", f.swizzleB},
      {"num_sms", f.numSMs},       {"red_max_blocks", f.redMaxBlocks},
      {"quad_b", f.quadB},         {"d_f32", o.dF32},
      {"accumulate", o.accumulate}};
  for (auto [name, value] : fields)
    if (value < 0 || value > std::numeric_limits<int32_t>::max())
      return (llvm::Twine(name) + " must be in [0, 2^31), got " +
              llvm::Twine(value))
          .str();
  c.blockM = f.blockM;
  c.blockN = f.blockN;
  c.blockK = f.blockK;
  c.stages = f.stages;
  c.descSlots = f.descSlots;
  c.mathWarpgroups = f.mathWarpgroups;
  c.clusterM = f.clusterM;
  c.clusterN = f.clusterN;
  c.swizzleA = f.swizzleA;
  c.swizzleB = f.swizzleB;
  c.numSMs = f.numSMs;
  c.redMaxBlocks = f.redMaxBlocks;
  c.quadB = f.quadB;
  c.kind = heur::Kind(static_cast<int>(kind));
  c.epilogue = toHeuristics(epilogue);
  c.unsafe = toHeuristics(unsafe);
  c.dtype = heur::Dtype(static_cast<int>(o.dtype));
  c.majorA = heur::Major(static_cast<int>(o.majorA));
  c.majorB = heur::Major(static_cast<int>(o.majorB));
  c.dF32 = int(o.dF32);
  c.accumulate = int(o.accumulate);
  return "";
}

heur::KernelConfig mlir::dgemm::toHeuristicsConfig(ConfigAttr attr) {
  heur::KernelConfig c;
  std::string bad = ::toHeuristicsConfig(
      {attr.getBlockM(), attr.getBlockN(), attr.getBlockK(), attr.getStages(),
       attr.getDescSlots(), attr.getMathWarpgroups(), attr.getClusterM(),
       attr.getClusterN(), attr.getSwizzleA(), attr.getSwizzleB(),
       attr.getNumSms(), attr.getRedMaxBlocks(), attr.getQuadB()},
      attr.getKind(), attr.getEpilogue(), attr.getUnsafe(),
      {attr.getDtype(), attr.getMajorA(), attr.getMajorB(), attr.getDF32(),
       attr.getAccumulate()},
      c);
  // The verifier rejected every config whose fields do not fit.
  assert(bad.empty() && "ConfigAttr::verify admits only 32-bit fields");
  (void)bad;
  return c;
}

ConfigAttr mlir::dgemm::toConfigAttr(MLIRContext *ctx,
                                     const heur::KernelConfig &c) {
  return ConfigAttr::get(
      ctx, GemmKind(static_cast<int>(c.kind)), c.blockM, c.blockN, c.blockK,
      c.stages, c.descSlots, c.mathWarpgroups, c.clusterM, c.clusterN,
      c.swizzleA, c.swizzleB, c.numSMs, fromHeuristics(c.epilogue),
      c.redMaxBlocks, c.quadB, fromHeuristics(c.unsafe),
      OperandType(static_cast<int>(c.dtype)),
      Majorness(static_cast<int>(c.majorA)),
      Majorness(static_cast<int>(c.majorB)), c.dF32, c.accumulate);
}

LogicalResult
ConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError, GemmKind kind,
                   int64_t blockM, int64_t blockN, int64_t blockK,
                   int64_t stages, int64_t descSlots, int64_t mathWarpgroups,
                   int64_t clusterM, int64_t clusterN, int64_t swizzleA,
                   int64_t swizzleB, int64_t numSMs, KernelEpilogue epilogue,
                   int64_t redMaxBlocks, int64_t quadB, UnsafeVariant unsafe,
                   OperandType dtype, Majorness majorA, Majorness majorB,
                   int64_t dF32, int64_t accumulate) {
  heur::KernelConfig config;
  std::string problem = ::toHeuristicsConfig(
      {blockM, blockN, blockK, stages, descSlots, mathWarpgroups, clusterM,
       clusterN, swizzleA, swizzleB, numSMs, redMaxBlocks, quadB},
      kind, epilogue, unsafe, {dtype, majorA, majorB, dF32, accumulate},
      config);
  // The rules live in the heuristics library so that the runtime applies the
  // very same ones to configurations it is handed.
  if (problem.empty())
    problem = heur::checkConfig(config, heur::Target());
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
