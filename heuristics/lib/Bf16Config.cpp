//===- Bf16Config.cpp - BF16 kernel configurations ------------------------===//

#include "dgemm/Heuristics/Bf16Config.h"

#include "Rules.h"

#include <sstream>

using namespace dgemm::heuristics;
using dgemm::heuristics::detail::ceilDiv;
using dgemm::heuristics::detail::violation;

namespace {
// A tile's operand traffic relative to its tensor-core work, per row or
// column of the tile: an assumption, not a measurement (docs/Heuristics.md).
constexpr int64_t kBf16TileOverhead = 64;
constexpr double kTieTolerance = 0.01;
constexpr int kCandidateBlockM[] = {128, 64};
constexpr int kCandidateBlockN[] = {256, 128, 64};

/// The layout and output rules of a kind, shared by the problem and the
/// config checks.
std::string checkLayout(Kind kind, Major majorA, Major majorB, int dF32,
                        int accumulate) {
  bool normal = kind == Kind::Normal,
       kGrouped = kind == Kind::KGroupedContiguous;
  bool contiguous =
      kind == Kind::MGroupedContiguous || kind == Kind::MGroupedContiguousPsum;
  if (!normal && !kGrouped && !contiguous && kind != Kind::MGroupedMasked)
    return violation("kind",
                     "be normal (0), m_grouped_contiguous (1), "
                     "m_grouped_masked (2), k_grouped_contiguous (3) or "
                     "m_grouped_contiguous_psum (4)",
                     int(kind));
  if (majorA != Major::K && majorA != Major::MN)
    return violation("major_a", "be k (0) or mn (1)", int(majorA));
  if (majorB != Major::K && majorB != Major::MN)
    return violation("major_b", "be k (0) or mn (1)", int(majorB));
  if (kGrouped && (majorA != Major::MN || majorB != Major::MN))
    return violation(majorA != Major::MN ? "major_a" : "major_b",
                     "be mn (1) for the k-grouped BF16 GEMM (A [sum_k, M] and "
                     "B [sum_k, N]: DeepGEMM's k_grouped_bf16_gemm_tn)",
                     int(majorA != Major::MN ? majorA : majorB));
  if (majorA == Major::MN && !normal && !kGrouped)
    return violation("major_a",
                     std::string("be k (0) for ") + kindName(kind) +
                         " (its rows belong to groups: A is [rows, K])",
                     int(majorA));
  if (majorB == Major::MN && kind == Kind::MGroupedMasked)
    return violation("major_b",
                     "be k (0) for m_grouped_masked (DeepGEMM's "
                     "m_grouped_bf16_gemm_nt_masked)",
                     int(majorB));
  if (dF32 != 0 && dF32 != 1)
    return violation("d_f32", "be 0 or 1", dF32);
  if (accumulate != 0 && accumulate != 1)
    return violation("accumulate", "be 0 or 1", accumulate);
  if (kGrouped && !dF32)
    return violation("d_f32", "be 1 for the k-grouped BF16 GEMM (FP32 d)",
                     dF32);
  if (dF32 && !normal && !kGrouped)
    return violation(
        "d_f32", std::string("be 0 for ") + kindName(kind) + " (BF16 d)", dF32);
  if (accumulate && !dF32)
    return violation("accumulate",
                     "be 0 with a BF16 d (only an FP32 d accumulates)",
                     accumulate);
  return "";
}
} // namespace

std::string dgemm::heuristics::checkBf16Problem(const Bf16Problem &p) {
  if (std::string why =
          checkLayout(p.kind, p.majorA, p.majorB, p.dF32, p.accumulate);
      !why.empty())
    return why;
  const char *mName = p.kind == Kind::MGroupedMasked ? "m_max"
                      : p.kind == Kind::MGroupedContiguous ||
                              p.kind == Kind::MGroupedContiguousPsum
                          ? "m_sum"
                          : "m";
  std::pair<const char *, int64_t> fields[] = {
      {mName, p.m}, {"n", p.n}, {"num_groups", p.numGroups}};
  for (auto [name, value] : fields)
    if (value < 1 || value > kMaxProblemExtent)
      return violation(name, "be in [1, 2^31 - 1]", value);
  int64_t minK = p.kind == Kind::KGroupedContiguous ? 0 : 1;
  if (p.k < minK || p.k > kMaxProblemExtent)
    return violation(p.kind == Kind::KGroupedContiguous ? "sum_k" : "k",
                     minK ? "be in [1, 2^31 - 1]" : "be in [0, 2^31 - 1]", p.k);
  if (p.n * p.numGroups > kMaxProblemExtent)
    return violation("n * num_groups",
                     "be <= 2^31 - 1 (B's rows: one tensor map over all "
                     "groups)",
                     p.n * p.numGroups);
  return "";
}

std::string dgemm::heuristics::checkBf16Config(const KernelConfig &c,
                                               const Target &target) {
  if (c.dtype != Dtype::Bf16)
    return violation("dtype", "be bf16 (1) for a BF16 kernel", int(c.dtype));
  if (std::string why =
          checkLayout(c.kind, c.majorA, c.majorB, c.dF32, c.accumulate);
      !why.empty())
    return why;
  if (c.blockM != 64 && c.blockM != 128)
    return violation("block_m",
                     "be 64 or 128 for the BF16 kernels (64 rows per math "
                     "warpgroup)",
                     c.blockM);
  if (c.mathWarpgroups != c.blockM / 64)
    return violation("math_warpgroups",
                     "equal block_m / 64 = " + std::to_string(c.blockM / 64),
                     c.mathWarpgroups);
  if (c.blockN < 16 || c.blockN > 256 || c.blockN % 16 != 0)
    return violation("block_n",
                     "be a multiple of 16 in [16, 256] for the BF16 kernels "
                     "(WGMMA N; one FP32 fragment of block_n / 2 registers)",
                     c.blockN);
  if (c.majorB == Major::MN && c.blockN % 64 != 0)
    return violation("block_n",
                     "be a multiple of 64 with major_b = mn (B's tile is "
                     "loaded in 64-column, 128-byte swizzle columns)",
                     c.blockN);
  if (c.blockK != kBf16BlockK)
    return violation("block_k",
                     "be 64 for the BF16 kernels (128 bytes: one 128B-swizzle "
                     "row)",
                     c.blockK);
  return detail::checkParameterMapKernel(c, target, "the BF16 kernels");
}

const char *dgemm::heuristics::bf16LayoutName(Major majorA, Major majorB) {
  if (majorA == Major::K)
    return majorB == Major::K ? "nt" : "nn";
  return majorB == Major::K ? "tt" : "tn";
}

std::string dgemm::heuristics::bf16EntryName(const KernelConfig &c) {
  std::ostringstream os;
  os << "dgemm_";
  switch (c.kind) {
  case Kind::Normal:
    os << "normal";
    break;
  case Kind::MGroupedContiguous:
    os << "mgrouped";
    break;
  case Kind::MGroupedContiguousPsum:
    os << "mgrouped_psum";
    break;
  case Kind::MGroupedMasked:
    os << "mgrouped_masked";
    break;
  case Kind::KGroupedContiguous:
    os << "kgrouped";
    break;
  }
  os << "_bf16_" << bf16LayoutName(c.majorA, c.majorB) << "_bm" << c.blockM
     << "_bn" << c.blockN << "_s" << c.stages;
  if (c.dF32)
    os << "_f32";
  if (c.accumulate)
    os << "_acc";
  if (c.unsafe & Unsafe::SkipProxyFence)
    os << "_unsafe_nofence";
  return os.str();
}

KernelConfig dgemm::heuristics::makeBf16Config(const Bf16Problem &p, int blockM,
                                               int blockN,
                                               const Target &target) {
  KernelConfig c;
  c.kind = p.kind;
  c.dtype = Dtype::Bf16;
  c.majorA = p.majorA;
  c.majorB = p.majorB;
  c.dF32 = p.dF32;
  c.accumulate = p.accumulate;
  c.blockM = blockM;
  c.blockN = blockN;
  c.blockK = kBf16BlockK;
  c.mathWarpgroups = blockM / 64;
  c.descSlots = 0;
  c.numSMs = target.numSMs;
  c.stages = mostStages(c, target);
  return c;
}

std::vector<KernelConfig>
dgemm::heuristics::candidateBf16Configs(const Bf16Problem &problem,
                                        const Target &target) {
  std::vector<KernelConfig> out;
  for (int blockM : kCandidateBlockM)
    for (int blockN : kCandidateBlockN) {
      KernelConfig c = makeBf16Config(problem, blockM, blockN, target);
      if (checkConfig(c, target).empty())
        out.push_back(c);
    }
  return out;
}

KernelConfig dgemm::heuristics::selectBf16Config(const Bf16Problem &problem,
                                                 const Target &target) {
  std::vector<KernelConfig> candidates = candidateBf16Configs(problem, target);
  if (candidates.empty())
    return makeBf16Config(problem, 128, 128, target);
  if (!checkBf16Problem(problem).empty() || target.numSMs < 1)
    return candidates.front();
  bool perGroup = problem.kind == Kind::MGroupedMasked ||
                  problem.kind == Kind::KGroupedContiguous;
  auto makespan = [&](const KernelConfig &c) {
    int64_t tiles = ceilDiv(problem.m, c.blockM) * ceilDiv(problem.n, c.blockN);
    if (perGroup)
      tiles *= problem.numGroups;
    double waves = double(ceilDiv(tiles, target.numSMs));
    return waves * double(int64_t(c.blockM) * c.blockN +
                          kBf16TileOverhead * (c.blockM + c.blockN));
  };
  // Candidates come largest first: a later one must beat the best by more
  // than the tolerance.
  KernelConfig best = candidates.front();
  double bestTime = makespan(best);
  for (const KernelConfig &c : candidates) {
    double t = makespan(c);
    if (t < (1 - kTieTolerance) * bestTime) {
      best = c;
      bestTime = t;
    }
  }
  return best;
}

void dgemm::heuristics::applyBf16Overrides(KernelConfig &config,
                                           const ConfigOverrides &o,
                                           const Target &target) {
  Bf16Problem shape;
  shape.kind = config.kind;
  shape.majorA = config.majorA;
  shape.majorB = config.majorB;
  shape.dF32 = config.dF32;
  shape.accumulate = config.accumulate;
  // Only a candidate tile: the bundle holds no other.
  const std::vector<KernelConfig> candidates =
      candidateBf16Configs(shape, target);
  detail::applyTileOverrides(
      config, o, target,
      [&](int blockM, int blockN) -> std::optional<KernelConfig> {
        for (const KernelConfig &k : candidates)
          if (k.blockM == blockM && k.blockN == blockN)
            return makeBf16Config(shape, blockM, blockN, target);
        return std::nullopt;
      });
}
