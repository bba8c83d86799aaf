//===- SelectConfig.cpp - Choose kernel configurations --------------------===//

#include "dgemm/Dialect/DGemm/Transforms/Passes.h"

#include "dgemm/Heuristics/Bf16Config.h"
#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Heuristics/MGroupedConfig.h"

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

  /// Out-of-range options are errors, not defaults.
  LogicalResult checkOptions() {
    auto bad = [&](StringRef flag, int64_t value, StringRef rule) {
      return getOperation().emitError("dgemm-select-config: ")
             << flag << " must be " << rule << ", got " << value;
    };
    if (numSMs < 1)
      return bad("num-sms", numSMs, ">= 1");
    if (smemBytes < 1)
      return bad("smem-bytes", smemBytes, ">= 1");
    if (memoryBandwidthGBps < 0)
      return bad("memory-bandwidth-gbps", memoryBandwidthGBps,
                 ">= 0 (0: unknown)");
    if (expectedK < 0)
      return bad("expected-k", expectedK, ">= 0 (0: the default)");
    if (descSlots < 0 || descSlots > 2)
      return bad("desc-slots", descSlots, "0 (the heuristics'), 1 or 2");
    if (clusterM < 0 || clusterM > 2)
      return bad("cluster-m", clusterM, "0 (the heuristics'), 1 or 2");
    if (quadB < -1 || quadB > 1)
      return bad("quad-b", quadB, "-1 (the heuristics'), 0 or 1");
    return success();
  }

  /// The 1D2D kernels' configuration (m_grouped_contiguous,
  /// m_grouped_contiguous_psum, m_grouped_masked, normal): their heuristics and
  /// the overrides that apply to them (the k-grouped kernel's descriptor slots,
  /// clusters and quad-ordered B do not).
  WalkResult selectMGrouped(GemmOp gemm, const heur::Target &target,
                            unsigned unsafeBits) {
    if (descSlots > 0 || clusterM > 1 || quadB == 1) {
      gemm.emitOpError("dgemm-select-config: desc-slots, cluster-m and quad-b "
                       "configure the k-grouped kernel; ")
          << stringifyGemmKind(gemm.getKind())
          << " has no descriptor slots, clusters or quad-ordered B";
      return WalkResult::interrupt();
    }
    heur::MGroupedProblem problem;
    problem.kind = static_cast<heur::Kind>(gemm.getKind());
    // Unknown extents: DeepGEMM's benchmark shapes. m is M_sum (contiguous
    // and psum: 4 experts of 8192 tokens), M_max taken as the expected rows per
    // group (masked: a decode step of 256 tokens per expert) or M (normal:
    // 4096).
    int64_t unknownM = 32768;
    if (gemm.getKind() == GemmKind::m_grouped_masked)
      unknownM = 256;
    else if (gemm.getKind() == GemmKind::normal)
      unknownM = 4096;
    problem.m = ShapedType::isDynamic(gemm.getM()) ? unknownM : gemm.getM();
    problem.n = ShapedType::isDynamic(gemm.getN()) ? 4096 : gemm.getN();
    problem.k = ShapedType::isDynamic(gemm.getK()) ? 7168 : gemm.getK();
    problem.numGroups = gemm.getNumGroups();
    return recordParameterMapKernel(
        gemm, heur::selectMGroupedConfig(problem, target), target, unsafeBits);
  }

  /// The BF16 kernels' configuration (every kind): their heuristics and the
  /// overrides that apply to them, as for the 1D2D kernels.
  WalkResult selectBf16(GemmOp gemm, const heur::Target &target,
                        unsigned unsafeBits) {
    if (descSlots > 0 || clusterM > 1 || quadB == 1) {
      gemm.emitOpError("dgemm-select-config: desc-slots, cluster-m and quad-b "
                       "configure the FP8 k-grouped kernel; the BF16 kernels "
                       "have no descriptor slots, clusters or quad-ordered B");
      return WalkResult::interrupt();
    }
    return recordParameterMapKernel(
        gemm, heur::selectBf16Config(bf16ProblemOf(gemm), target), target,
        unsafeBits);
  }

  /// A 1D2D or BF16 configuration with the one override that applies to
  /// them here (unsafe), applied as the runtime applies its own.
  WalkResult recordParameterMapKernel(GemmOp gemm, heur::KernelConfig config,
                                      const heur::Target &target,
                                      unsigned unsafeBits) {
    heur::ConfigOverrides overrides;
    overrides.unsafe = unsafeBits;
    if (std::string why = heur::applyOverrides(config, overrides, target,
                                               /*problem=*/nullptr);
        !why.empty()) {
      gemm.emitOpError("dgemm-select-config found no valid configuration: ")
          << why;
      return WalkResult::interrupt();
    }
    return record(gemm, config, target);
  }

  /// The k-grouped kernel's configuration, for a k-grouped description or a
  /// normal 1D1D one (one group whose K is the description's k).
  WalkResult selectKGrouped(GemmOp gemm, const heur::Target &target,
                            unsigned unsafeBits) {
    heur::KGroupedProblem problem;
    // Unknown M or N: plan for the largest shape of DeepGEMM's wgrad
    // benchmarks, where the tile choice matters most.
    problem.m = ShapedType::isDynamic(gemm.getM()) ? 4096 : gemm.getM();
    problem.n = ShapedType::isDynamic(gemm.getN()) ? 7168 : gemm.getN();
    problem.numGroups = gemm.getNumGroups();
    problem.expectedKPerGroup = expectedK;
    if (expectedK == 0 && !ShapedType::isDynamic(gemm.getK()))
      problem.expectedKPerGroup = gemm.getK();
    problem.inPlace = inPlace;
    heur::KernelConfig config = heur::selectKGroupedConfig(problem, target);
    // The overrides, applied as the runtime applies its own (one function
    // in the heuristics library).
    heur::ConfigOverrides overrides;
    if (descSlots > 0)
      overrides.descSlots = descSlots;
    if (clusterM > 0)
      overrides.clusterM = clusterM;
    if (quadB >= 0)
      overrides.quadB = quadB;
    overrides.unsafe = unsafeBits;
    std::string overrideError =
        heur::applyOverrides(config, overrides, target, &problem);
    if (!overrideError.empty()) {
      gemm.emitOpError("dgemm-select-config: ") << overrideError;
      return WalkResult::interrupt();
    }
    if (quadB == 1 && !config.quadB) {
      gemm.emitOpError("dgemm-select-config: quad-b=1, but the kernel "
                       "cannot read B in quad order (N % 16 == 0 and a "
                       "block_n that checkConfig accepts with quad_b = 1)");
      return WalkResult::interrupt();
    }
    return record(gemm, config, target);
  }

  /// Checks the chosen configuration and records it on the description.
  WalkResult record(GemmOp gemm, const heur::KernelConfig &config,
                    const heur::Target &target) {
    if (std::string why = heur::checkConfig(config, target); !why.empty()) {
      gemm.emitOpError("dgemm-select-config found no valid configuration: ")
          << why;
      return WalkResult::interrupt();
    }
    gemm.setConfigAttr(toConfigAttr(gemm.getContext(), config));
    ++numSelected;
    return WalkResult::advance();
  }

  void runOnOperation() override {
    if (failed(checkOptions()))
      return signalPassFailure();
    heur::Target target;
    target.numSMs = numSMs;
    target.maxSmemPerBlock = smemBytes;
    target.memoryBandwidthGBps = memoryBandwidthGBps;
    std::optional<unsigned> parsedUnsafe =
        heur::parseUnsafe(unsafe.empty() ? std::string("none") : unsafe);
    if (!parsedUnsafe) {
      getOperation().emitError("dgemm-select-config: unsafe must be none or a "
                               "comma-separated list of "
                               "skip_descriptor_drain, skip_proxy_fence; got '")
          << unsafe << "'";
      return signalPassFailure();
    }
    unsigned unsafeBits = *parsedUnsafe;
    WalkResult result = getOperation().walk([&](GemmOp gemm) {
      if (gemm.getConfigAttr())
        return WalkResult::advance();
      if (gemm.getAType().isBF16())
        return selectBf16(gemm, target, unsafeBits);
      if (gemm.getKernelKind() == GemmKind::k_grouped_contiguous)
        return selectKGrouped(gemm, target, unsafeBits);
      return selectMGrouped(gemm, target, unsafeBits);
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
