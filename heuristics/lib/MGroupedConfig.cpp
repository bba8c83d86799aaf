//===- MGroupedConfig.cpp - FP8 1D2D kernel configurations ----------------===//

#include "dgemm/Heuristics/MGroupedConfig.h"

#include "Rules.h"

#include <sstream>

using namespace dgemm::heuristics;
using dgemm::heuristics::detail::ceilDiv;
using dgemm::heuristics::detail::violation;

namespace {
constexpr int kBlockK = 128;
// A tile's fixed cost (pipeline fill, epilogue) in units of one 128-deep
// column-block's share of its block loop: an assumption, not a measurement
// (docs/Heuristics.md).
constexpr int64_t kTileOverheadColumns = 32;
constexpr double kTieTolerance = 0.01;
constexpr int kCandidateBlockM[] = {128, 64};
constexpr int kCandidateBlockN[] = {128, 64, 32, 16};
} // namespace

bool dgemm::heuristics::isOneDTwoDKind(Kind kind) {
  return kind == Kind::MGroupedContiguous || kind == Kind::MGroupedMasked ||
         kind == Kind::MGroupedContiguousPsum || kind == Kind::Normal;
}

std::string
dgemm::heuristics::checkMGroupedProblem(const MGroupedProblem &p) {
  // M is named as the kind's entry point names it.
  const char *mName = p.kind == Kind::MGroupedMasked ? "m_max"
                      : p.kind == Kind::Normal       ? "m"
                                                     : "m_sum";
  std::pair<const char *, int64_t> fields[] = {
      {mName, p.m}, {"n", p.n}, {"k", p.k}, {"num_groups", p.numGroups}};
  for (auto [name, value] : fields)
    if (value < 1 || value > kMaxProblemExtent)
      return violation(name, "be in [1, 2^31 - 1]", value);
  if (p.n * p.numGroups > kMaxProblemExtent)
    return violation("n * num_groups",
                     "be <= 2^31 - 1 (B's rows: one tensor map over [G * N, K])",
                     p.n * p.numGroups);
  return "";
}

std::string dgemm::heuristics::checkMGroupedConfig(const KernelConfig &c,
                                                   const Target &target) {
  if (!isOneDTwoDKind(c.kind))
    return violation("kind",
                     "be m_grouped_contiguous (1), m_grouped_masked (2), "
                     "m_grouped_contiguous_psum (4) or normal (0) for a 1D2D "
                     "kernel",
                     int(c.kind));
  if (c.blockM != 64 && c.blockM != 128)
    return violation("block_m",
                     "be 64 or 128 for the 1D2D kernels (a divisor of the "
                     "128-row expert alignment, 64 rows per math warpgroup)",
                     c.blockM);
  if (c.mathWarpgroups != c.blockM / 64)
    return violation("math_warpgroups",
                     "equal block_m / 64 = " + std::to_string(c.blockM / 64),
                     c.mathWarpgroups);
  if (c.blockN < 16 || c.blockN % 16 != 0 || 128 % c.blockN != 0)
    return violation("block_n",
                     "be 16, 32, 64 or 128 for the 1D2D kernels (a tile's "
                     "columns share one 128x128 B scale block)",
                     c.blockN);
  if (c.blockK != kBlockK)
    return violation("block_k", "be 128 (one scale per 128 K)", c.blockK);
  return detail::checkParameterMapKernel(c, target, "the 1D2D kernels");
}

std::string detail::checkParameterMapKernel(const KernelConfig &c,
                                            const Target &target,
                                            const char *family) {
  std::string of = std::string(" for ") + family;
  if (c.stages < 2)
    return violation("stages", "be >= 2 (load one stage while computing one)",
                     c.stages);
  if (c.descSlots != 0)
    return violation("desc_slots",
                     "be 0" + of +
                         " (no descriptor is rewritten: A and B are "
                         "kernel-parameter tensor maps)",
                     c.descSlots);
  if (c.clusterM != 1 || c.clusterN != 1)
    return violation(c.clusterM != 1 ? "cluster_m" : "cluster_n",
                     "be 1" + of + " (no multicast)",
                     c.clusterM != 1 ? c.clusterM : c.clusterN);
  if (c.swizzleA != 128 || c.swizzleB != 128)
    return violation(c.swizzleA != 128 ? "swizzle_a" : "swizzle_b",
                     "be 128 (bytes: one 128-byte row per TMA box row)",
                     c.swizzleA != 128 ? c.swizzleA : c.swizzleB);
  if (c.numSMs < 1)
    return violation("num_sms", "be >= 1", c.numSMs);
  if (c.epilogue != Epilogue::Register || c.redMaxBlocks != 0)
    return violation(c.redMaxBlocks != 0 ? "red_max_blocks" : "epilogue",
                     "be register (0)" + of,
                     c.redMaxBlocks != 0 ? c.redMaxBlocks : int(c.epilogue));
  if (c.quadB != 0)
    return violation("quad_b", "be 0" + of, c.quadB);
  if (c.unsafe & ~unsigned(Unsafe::SkipProxyFence))
    return violation("unsafe",
                     "be none or skip_proxy_fence" + of +
                         " (no descriptor to drain)",
                     c.unsafe);
  if (c.smemBytes() > target.maxSmemPerBlock)
    return violation("smem_bytes",
                     "be <= the target's max dynamic shared memory per block " +
                         std::to_string(target.maxSmemPerBlock),
                     c.smemBytes());
  return "";
}

std::string dgemm::heuristics::mGroupedEntryName(const KernelConfig &c) {
  std::ostringstream os;
  switch (c.kind) {
  case Kind::MGroupedMasked:
    os << "dgemm_mgrouped_masked_fp8_1d2d";
    break;
  case Kind::MGroupedContiguousPsum:
    os << "dgemm_mgrouped_psum_fp8_1d2d";
    break;
  case Kind::Normal:
    os << "dgemm_normal_fp8_1d2d";
    break;
  default:
    os << "dgemm_mgrouped_fp8_1d2d";
    break;
  }
  os << "_bm" << c.blockM << "_bn" << c.blockN << "_s" << c.stages;
  if (c.unsafe & Unsafe::SkipProxyFence)
    os << "_unsafe_nofence";
  return os.str();
}

KernelConfig dgemm::heuristics::makeMGroupedConfig(int blockM, int blockN,
                                                   const Target &target,
                                                   Kind kind) {
  KernelConfig c;
  c.kind = kind;
  c.blockM = blockM;
  c.blockN = blockN;
  c.mathWarpgroups = blockM / 64;
  c.descSlots = 0;
  c.numSMs = target.numSMs;
  c.stages = mostStages(c, target);
  return c;
}

int64_t dgemm::heuristics::modelledTiles(const MGroupedProblem &problem,
                                         int blockN) {
  int64_t perGroup = ceilDiv(problem.m, 128) * ceilDiv(problem.n, blockN);
  return problem.kind == Kind::MGroupedMasked ? perGroup * problem.numGroups
                                              : perGroup;
}

KernelConfig
dgemm::heuristics::selectMGroupedConfig(const MGroupedProblem &problem,
                                        const Target &target) {
  KernelConfig best = makeMGroupedConfig(128, 128, target, problem.kind);
  if (!checkMGroupedProblem(problem).empty() || target.numSMs < 1)
    return best;
  auto makespan = [&](int blockN) {
    return double(ceilDiv(modelledTiles(problem, blockN), target.numSMs)) *
           double(blockN + kTileOverheadColumns);
  };
  if (makespan(64) < (1 - kTieTolerance) * makespan(128))
    best = makeMGroupedConfig(128, 64, target, problem.kind);
  return best;
}

std::vector<KernelConfig>
dgemm::heuristics::candidateMGroupedConfigs(const Target &target, Kind kind) {
  std::vector<KernelConfig> out;
  for (int blockM : kCandidateBlockM)
    for (int blockN : kCandidateBlockN) {
      KernelConfig c = makeMGroupedConfig(blockM, blockN, target, kind);
      if (checkConfig(c, target).empty())
        out.push_back(c);
    }
  return out;
}

void dgemm::heuristics::applyMGroupedOverrides(KernelConfig &config,
                                               const ConfigOverrides &o,
                                               const Target &target) {
  const Kind kind = config.kind;
  detail::applyTileOverrides(config, o, target, [&](int blockM, int blockN) {
    return std::optional<KernelConfig>(
        makeMGroupedConfig(blockM, blockN, target, kind));
  });
}
