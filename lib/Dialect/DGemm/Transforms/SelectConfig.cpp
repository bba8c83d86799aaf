//===- SelectConfig.cpp - Choose kernel configurations --------------------===//

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"

#include "dgemm/Heuristics/KernelConfig.h"

namespace mlir::dgemm {
#define GEN_PASS_DEF_DGEMMSELECTCONFIG
#include "dgemm/Dialect/DGemm/Transforms/Passes.h.inc"
} // namespace mlir::dgemm

using namespace mlir;
using namespace mlir::dgemm;
namespace heur = ::dgemm::heuristics;

namespace {
struct SelectConfigPass
    : public mlir::dgemm::impl::DGemmSelectConfigBase<SelectConfigPass> {
  using Base::Base;

  void runOnOperation() override {
    heur::Target target;
    target.numSMs = numSMs;
    target.maxSmemPerBlock = smemBytes;
    target.memoryBandwidthGBps = memoryBandwidthGBps;
    WalkResult result = getOperation().walk([&](GemmOp gemm) {
      if (gemm.getConfigAttr())
        return WalkResult::advance();
      if (gemm.getKind() != GemmKind::k_grouped_contiguous) {
        gemm.emitOpError("dgemm-select-config: no heuristics for kind '")
            << stringifyGemmKind(gemm.getKind())
            << "' yet (only k_grouped_contiguous is lowered)";
        return WalkResult::interrupt();
      }
      heur::KGroupedProblem problem;
      // Unknown M or N: plan for the largest shape of DeepGEMM's wgrad
      // benchmarks, where the tile choice matters most.
      problem.m = ShapedType::isDynamic(gemm.getM()) ? 4096 : gemm.getM();
      problem.n = ShapedType::isDynamic(gemm.getN()) ? 7168 : gemm.getN();
      problem.numGroups = gemm.getNumGroups();
      problem.expectedKPerGroup = expectedK;
      problem.inPlace = inPlace;
      heur::KernelConfig config = heur::selectKGroupedConfig(problem, target);
      if (descSlots > 0)
        config.descSlots = descSlots;
      if (clusterM > 0)
        config.clusterM = clusterM;
      // CTA pairs cannot park their tiles: the pair's in-place kernel, as
      // the runtime's DGEMM_CLUSTER_M override gives.
      heur::unparkIfUnfit(config, target);
      config.quadB = quadB < 0 ? heur::quadBFits(config, problem.n, target)
                               : quadB;
      // The rank-5 map of B has whole 16-row groups (a dynamic N is
      // checked by the runtime at launch).
      if (config.quadB && !ShapedType::isDynamic(gemm.getN()) &&
          gemm.getN() % 16 != 0) {
        gemm.emitOpError("dgemm-select-config: quad-b=1 needs N to be a "
                         "multiple of 16, got ")
            << gemm.getN();
        return WalkResult::interrupt();
      }
      std::string problemText = heur::checkConfig(config, target);
      if (!problemText.empty()) {
        gemm.emitOpError("dgemm-select-config found no valid configuration: ")
            << problemText;
        return WalkResult::interrupt();
      }
      gemm.setConfigAttr(toConfigAttr(gemm.getContext(), config));
      ++numSelected;
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
