//===- KernelConfig.cpp - K-grouped FP8 kernel configurations -------------===//
//
// The KernelConfig struct's methods, the kind, epilogue and unsafe names, the
// shared-memory layout and the checks of a problem and a configuration. The
// selection is in KGroupedSelect.cpp, its in-place model in InPlaceModel.cpp,
// the overrides in Overrides.cpp.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Heuristics/KernelConfig.h"
#include "KGroupedModel.h"
#include "dgemm/Heuristics/Bf16Config.h"
#include "dgemm/Heuristics/MGroupedConfig.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <utility>

using namespace dgemm::heuristics;
using namespace dgemm::heuristics::detail;

namespace {

// Kernel-layout facts (docs/KernelABI.md).
constexpr int kSmemAlignSlack = 1024; // dynamic smem base rounded up to 1 KiB
constexpr int kScaleSliceAlign = 128; // sfa/sfb slices start 128-byte aligned
constexpr int kBarrierBytesPerStage = 2 * 8; // full + empty mbarrier
constexpr int kMaxStages = 8;
constexpr int kThreadsPerWarpgroup = 128;
// Three math warpgroups (block_m = 192) have 160 registers per thread
// (setmaxnreg; the producer keeps 32): a fragment and the sum, block_n FP32
// registers, leave room for addressing up to 128 columns.
constexpr int kMaxBlockNThreeWarpgroups = 128;

} // namespace

std::string dgemm::heuristics::checkProblem(const KGroupedProblem &p) {
  auto outOfRange = [](const std::string &field, int64_t got) {
    return field + " must be in [0, " + std::to_string(kMaxProblemExtent) +
           "] (a 32-bit kernel parameter), got " + std::to_string(got);
  };
  if (p.m < 0 || p.m > kMaxProblemExtent)
    return outOfRange("m", p.m);
  if (p.n < 0 || p.n > kMaxProblemExtent)
    return outOfRange("n", p.n);
  if (p.numGroups < 0)
    return outOfRange("numGroups", p.numGroups);
  if (p.ks.size() > static_cast<uint64_t>(kMaxProblemExtent))
    return "ks must hold at most " + std::to_string(kMaxProblemExtent) +
           " groups, got " + std::to_string(p.ks.size());
  // Negative K count as 0 (an empty group).
  for (size_t g = 0; g < p.ks.size(); ++g)
    if (p.ks[g] > kMaxProblemExtent)
      return "ks[" + std::to_string(g) +
             "] must be <= " + std::to_string(kMaxProblemExtent) +
             " (a 32-bit kernel parameter), got " + std::to_string(p.ks[g]);
  if (p.expectedKPerGroup > kMaxProblemExtent)
    return "expectedKPerGroup must be <= " + std::to_string(kMaxProblemExtent) +
           " (a 32-bit kernel parameter), got " +
           std::to_string(p.expectedKPerGroup);
  return "";
}

const char *dgemm::heuristics::epilogueName(Epilogue epilogue) {
  switch (epilogue) {
  case Epilogue::Register:
    return "register";
  case Epilogue::Reduction:
    return "reduction";
  case Epilogue::InPlace:
    return "in_place";
  case Epilogue::Parked:
    return "parked";
  }
  return "invalid";
}

std::optional<Epilogue>
dgemm::heuristics::parseEpilogue(std::string_view name) {
  for (Epilogue e : {Epilogue::Register, Epilogue::Reduction, Epilogue::InPlace,
                     Epilogue::Parked})
    if (name == epilogueName(e))
      return e;
  return std::nullopt;
}

bool dgemm::heuristics::isInPlaceKernel(Epilogue epilogue) {
  return epilogue == Epilogue::InPlace || epilogue == Epilogue::Parked;
}

namespace {
// The .meta names of the Unsafe bits, in bit order.
constexpr std::pair<Unsafe, const char *> kUnsafeBits[] = {
    {Unsafe::SkipDescriptorDrain, "skip_descriptor_drain"},
    {Unsafe::SkipProxyFence, "skip_proxy_fence"},
};
} // namespace

std::string dgemm::heuristics::unsafeNames(unsigned unsafe) {
  std::string names;
  for (unsigned bit = 0; bit < 32; ++bit) {
    unsigned mask = 1u << bit;
    if (!(unsafe & mask))
      continue;
    if (!names.empty())
      names += ",";
    const char *name = nullptr;
    for (const auto &[flag, flagName] : kUnsafeBits)
      if (unsigned(flag) == mask)
        name = flagName;
    names += name ? std::string(name) : "bit" + std::to_string(bit);
  }
  return names;
}

std::optional<unsigned> dgemm::heuristics::parseUnsafe(std::string_view text) {
  if (text == "none")
    return 0u;
  unsigned bits = 0;
  while (true) {
    size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    unsigned bit = 0;
    for (const auto &[flag, flagName] : kUnsafeBits)
      if (name == flagName)
        bit = unsigned(flag);
    if (bit == 0 || (bits & bit))
      return std::nullopt; // unknown, empty or repeated
    bits |= bit;
    if (comma == std::string_view::npos)
      return bits;
    text.remove_prefix(comma + 1);
  }
}

const char *dgemm::heuristics::kindName(Kind kind) {
  switch (kind) {
  case Kind::Normal:
    return "normal";
  case Kind::MGroupedContiguous:
    return "m_grouped_contiguous";
  case Kind::MGroupedMasked:
    return "m_grouped_masked";
  case Kind::KGroupedContiguous:
    return "k_grouped_contiguous";
  case Kind::MGroupedContiguousPsum:
    return "m_grouped_contiguous_psum";
  }
  return "invalid";
}

std::optional<Kind> dgemm::heuristics::parseKind(std::string_view name) {
  for (Kind k : {Kind::Normal, Kind::MGroupedContiguous, Kind::MGroupedMasked,
                 Kind::KGroupedContiguous, Kind::MGroupedContiguousPsum})
    if (name == kindName(k))
      return k;
  return std::nullopt;
}

const char *dgemm::heuristics::dtypeName(Dtype dtype) {
  switch (dtype) {
  case Dtype::Fp8:
    return "fp8";
  case Dtype::Bf16:
    return "bf16";
  }
  return "invalid";
}

std::optional<Dtype> dgemm::heuristics::parseDtype(std::string_view name) {
  for (Dtype d : {Dtype::Fp8, Dtype::Bf16})
    if (name == dtypeName(d))
      return d;
  return std::nullopt;
}

const char *dgemm::heuristics::majorName(Major major) {
  switch (major) {
  case Major::K:
    return "k";
  case Major::MN:
    return "mn";
  }
  return "invalid";
}

std::optional<Major> dgemm::heuristics::parseMajor(std::string_view name) {
  for (Major m : {Major::K, Major::MN})
    if (name == majorName(m))
      return m;
  return std::nullopt;
}

int KernelConfig::threads() const {
  return kThreadsPerWarpgroup * (1 + mathWarpgroups);
}

int KernelConfig::smemBytes() const {
  return int(std::clamp<int64_t>(smemLayoutFor(*this).totalBytes,
                                 std::numeric_limits<int>::min(),
                                 std::numeric_limits<int>::max()));
}

std::string KernelConfig::entryName() const {
  if (dtype == Dtype::Bf16)
    return bf16EntryName(*this);
  if (kind != Kind::KGroupedContiguous)
    return mGroupedEntryName(*this);
  std::ostringstream os;
  os << "dgemm_kgrouped_fp8_1d1d_bm" << blockM << "_bn" << blockN << "_s"
     << stages << "_r" << descSlots;
  if (clusterM != 1 || clusterN != 1)
    os << "_c" << clusterM << "x" << clusterN;
  if (redMaxBlocks > 0)
    os << "_red" << redMaxBlocks;
  if (isInPlaceKernel(epilogue))
    os << "_ip";
  if (quadB)
    os << "_q";
  if (epilogue == Epilogue::Parked)
    os << "_park";
  if (unsafe & Unsafe::SkipDescriptorDrain)
    os << "_unsafe_nodrain";
  if (unsafe & Unsafe::SkipProxyFence)
    os << "_unsafe_nofence";
  return os.str();
}

std::string KernelConfig::toMeta() const {
  std::ostringstream os;
  os << "entry=" << entryName() << "\n"
     << "kind=" << kindName(kind) << "\n"
     << "abi=" << kKernelAbiVersion << "\n"
     << "block_m=" << blockM << "\n"
     << "block_n=" << blockN << "\n"
     << "block_k=" << blockK << "\n"
     << "stages=" << stages << "\n"
     << "desc_slots=" << descSlots << "\n"
     << "math_warpgroups=" << mathWarpgroups << "\n"
     << "threads=" << threads() << "\n"
     << "cluster_m=" << clusterM << "\n"
     << "cluster_n=" << clusterN << "\n"
     << "smem_bytes=" << smemBytes() << "\n"
     << "red_max_blocks=" << redMaxBlocks << "\n"
     << "epilogue=" << epilogueName(epilogue) << "\n"
     << "quad_b=" << quadB << "\n"
     << "unsafe=" << (unsafe ? unsafeNames(unsafe) : "none") << "\n"
     << "heuristics_version=" << kHeuristicsVersion << "\n";
  if (dtype == Dtype::Bf16)
    os << "dtype=" << dtypeName(dtype) << "\n"
       << "major_a=" << majorName(majorA) << "\n"
       << "major_b=" << majorName(majorB) << "\n"
       << "d_f32=" << dF32 << "\n"
       << "accumulate=" << accumulate << "\n";
  return os.str();
}

bool KernelConfig::operator==(const KernelConfig &o) const {
  return kind == o.kind && blockM == o.blockM && blockN == o.blockN &&
         blockK == o.blockK && stages == o.stages && descSlots == o.descSlots &&
         mathWarpgroups == o.mathWarpgroups && clusterM == o.clusterM &&
         clusterN == o.clusterN && swizzleA == o.swizzleA &&
         swizzleB == o.swizzleB && numSMs == o.numSMs &&
         epilogue == o.epilogue && redMaxBlocks == o.redMaxBlocks &&
         quadB == o.quadB && unsafe == o.unsafe && dtype == o.dtype &&
         majorA == o.majorA && majorB == o.majorB && dF32 == o.dF32 &&
         accumulate == o.accumulate;
}

/// The layout of a tile, K block depth, stage count and epilogue.
/// `elementBytes`: 1 (FP8) or 2 (BF16, which has no sfa slices).
static SmemLayout layoutFor(int64_t blockM, int64_t blockN, int64_t blockK,
                            int64_t stages, bool parked, bool stagedSfb = true,
                            int64_t elementBytes = 1) {
  SmemLayout l;
  l.stages = stages;
  l.aBytes = satMul(satMul(blockM, blockK), elementBytes);
  l.bBytes = satMul(satMul(blockN, blockK), elementBytes);
  l.sfaBytes =
      elementBytes == 1 ? alignTo(satMul(blockM, 4), kScaleSliceAlign) : 0;
  l.sfbBytes = stagedSfb ? alignTo(satMul(blockN, 4), kScaleSliceAlign) : 0;
  l.aBase = 0;
  l.bBase = satMul(stages, l.aBytes);
  l.sfaBase = satAdd(l.bBase, satMul(stages, l.bBytes));
  l.sfbBase = satAdd(l.sfaBase, satMul(stages, l.sfaBytes));
  l.fullBase = satAdd(l.sfbBase, satMul(stages, l.sfbBytes));
  l.emptyBase = satAdd(l.fullBase, satMul(stages, kBarrierBytesPerStage / 2));
  l.parkBase = alignTo(
      satAdd(l.emptyBase, satMul(stages, kBarrierBytesPerStage / 2)), 1024);
  l.parkBytes = parked ? satMul(satMul(blockM, blockN), 4) : 0;
  l.parkFullBarrier = satAdd(l.parkBase, l.parkBytes);
  l.parkEmptyBarrier = satAdd(l.parkFullBarrier, 8);
  l.parkRecord = satAdd(l.parkFullBarrier, 16);
  // Two mbarriers and the parked tile's coordinates (16 bytes).
  l.totalBytes =
      satAdd(kSmemAlignSlack, parked ? satAdd(l.parkRecord, 16) : l.parkBase);
  return l;
}

SmemLayout dgemm::heuristics::smemLayoutFor(const KernelConfig &c) {
  bool bf16 = c.dtype == Dtype::Bf16;
  return layoutFor(c.blockM, c.blockN, c.blockK, c.stages,
                   c.epilogue == Epilogue::Parked,
                   /*stagedSfb=*/!bf16 && c.kind == Kind::KGroupedContiguous,
                   /*elementBytes=*/bf16 ? 2 : 1);
}

int64_t dgemm::heuristics::pipelineSmemBytesFor(int blockM, int blockN,
                                                int stages) {
  return layoutFor(blockM, blockN, kBlockK, stages, false).totalBytes;
}

int64_t dgemm::heuristics::parkedSmemBytesFor(int blockM, int blockN,
                                              int stages) {
  return layoutFor(blockM, blockN, kBlockK, stages, true).totalBytes;
}

std::string dgemm::heuristics::checkPark(const KernelConfig &c) {
  if (c.mathWarpgroups != 2)
    return violation("math_warpgroups",
                     "be 2 with epilogue = parked (the park holds a 128-row "
                     "tile)",
                     c.mathWarpgroups);
  if (c.clusterM != 1 || c.clusterN != 1)
    return violation(c.clusterM != 1 ? "cluster_m" : "cluster_n",
                     "be 1 with epilogue = parked (no multicast)",
                     c.clusterM != 1 ? c.clusterM : c.clusterN);
  if (c.quadB != 0)
    return violation(
        "quad_b", "be 0 with epilogue = parked (B's rows in order)", c.quadB);
  if (c.blockN % 32 != 0)
    return violation("block_n",
                     "be a multiple of 32 with epilogue = parked (the park's "
                     "swizzle permutes 128-byte groups)",
                     c.blockN);
  return "";
}

bool dgemm::heuristics::parkFits(const KernelConfig &c, const Target &target) {
  return checkPark(c).empty() &&
         parkedSmemBytesFor(c.blockM, c.blockN, c.stages) <=
             std::min(target.maxSmemPerBlock, kSm90MaxSmemPerBlock);
}

/// The most stages, up to kMaxStages, whose `bytesFor` fits the target.
static int largestFitting(int64_t (*bytesFor)(int, int, int), int blockM,
                          int blockN, const Target &target) {
  int stages = 0;
  while (stages < kMaxStages &&
         bytesFor(blockM, blockN, stages + 1) <= target.maxSmemPerBlock)
    ++stages;
  return stages;
}

int dgemm::heuristics::maxParkedStages(int blockM, int blockN,
                                       const Target &target) {
  return largestFitting(parkedSmemBytesFor, blockM, blockN, target);
}

void dgemm::heuristics::unparkIfUnfit(KernelConfig &c, const Target &target) {
  if (c.epilogue == Epilogue::Parked && !checkPark(c).empty()) {
    c.epilogue = Epilogue::InPlace;
    c.stages = maxStages(c.blockM, c.blockN, target);
  }
}

int dgemm::heuristics::mostStages(const KernelConfig &c, const Target &target) {
  if (c.kind != Kind::KGroupedContiguous || c.dtype == Dtype::Bf16) {
    KernelConfig next = c;
    next.stages = 0;
    while (next.stages < kMaxStages) {
      ++next.stages;
      if (smemLayoutFor(next).totalBytes > target.maxSmemPerBlock)
        return next.stages - 1;
    }
    return next.stages;
  }
  return c.epilogue == Epilogue::Parked
             ? maxParkedStages(c.blockM, c.blockN, target)
             : maxStages(c.blockM, c.blockN, target);
}

int dgemm::heuristics::maxStages(int blockM, int blockN, const Target &target) {
  return largestFitting(pipelineSmemBytesFor, blockM, blockN, target);
}

std::string dgemm::heuristics::checkConfig(const KernelConfig &c,
                                           const Target &target) {
  if (c.dtype == Dtype::Bf16)
    return checkBf16Config(c, target);
  if (c.dtype != Dtype::Fp8)
    return violation("dtype", "be fp8 (0) or bf16 (1)", int(c.dtype));
  if (c.majorA != Major::K || c.majorB != Major::K || c.dF32 || c.accumulate)
    return "major_a, major_b, d_f32 and accumulate must keep their defaults "
           "(k, k, 0, 0) for an FP8 kernel: its operands are K-major and its "
           "d type is its kind's";
  if (c.kind != Kind::KGroupedContiguous)
    return checkMGroupedConfig(c, target); // names a kind out of range

  if (c.blockM != 64 && c.blockM != 128 && c.blockM != 192)
    return violation(
        "block_m", "be 64, 128 or 192 (64 rows per math warpgroup)", c.blockM);
  if (c.mathWarpgroups != c.blockM / 64)
    return violation("math_warpgroups",
                     "equal block_m / 64 = " + std::to_string(c.blockM / 64),
                     c.mathWarpgroups);
  if (c.blockN < 8 || c.blockN > 256 || c.blockN % 8 != 0)
    return violation("block_n", "be a multiple of 8 in [8, 256] (WGMMA N)",
                     c.blockN);
  if (c.blockN > kMaxBlockNForRegisters)
    return violation("block_n",
                     "be <= 192 (register budget: 2 * block_n / 2 FP32 "
                     "accumulators per thread)",
                     c.blockN);
  if (c.blockM == 192 && c.blockN > kMaxBlockNThreeWarpgroups)
    return violation("block_n",
                     "be <= 128 with block_m = 192 (register budget of three "
                     "math warpgroups: 160 per thread)",
                     c.blockN);
  if (c.blockK != kBlockK)
    return violation("block_k", "be 128 (FP8 1D1D recipe: one scale per 128 K)",
                     c.blockK);
  if (c.stages < 2)
    return violation("stages", "be >= 2 (load one stage while computing one)",
                     c.stages);
  if (c.descSlots != 1 && c.descSlots != 2)
    return violation("desc_slots", "be 1 or 2", c.descSlots);
  if (c.smemBytes() > target.maxSmemPerBlock)
    return violation("smem_bytes",
                     "be <= the target's max dynamic shared memory per block " +
                         std::to_string(target.maxSmemPerBlock),
                     c.smemBytes());
  if (c.clusterM != 1 && c.clusterM != 2)
    return violation("cluster_m", "be 1 or 2", c.clusterM);
  if (c.clusterN != 1 && c.clusterN != 2)
    return violation("cluster_n", "be 1 or 2", c.clusterN);
  if (c.clusterM == 2 && c.clusterN == 2)
    return "cluster_m and cluster_n must not both be 2 (multicast along one "
           "dimension only)";
  if (c.clusterM == 2 && c.blockM == 192)
    return violation("cluster_m",
                     "be 1 with block_m = 192 (the paired kernel's producer "
                     "spills in the 32 registers it keeps next to three math "
                     "warpgroups)",
                     c.clusterM);
  if (c.clusterM == 2 && c.blockN % 16 != 0)
    return violation("block_n",
                     "be a multiple of 16 with cluster_m = 2 (each CTA's half "
                     "of the B tile must start on a 1024-byte swizzle atom)",
                     c.blockN);
  if (c.swizzleA != 128)
    return violation("swizzle_a",
                     "be 128 (bytes: one 128-byte FP8 K row per TMA box row)",
                     c.swizzleA);
  if (c.swizzleB != 128)
    return violation("swizzle_b",
                     "be 128 (bytes: one 128-byte FP8 K row per TMA box row)",
                     c.swizzleB);
  if (c.numSMs < 1)
    return violation("num_sms", "be >= 1", c.numSMs);
  if (c.redMaxBlocks < 0 || c.redMaxBlocks > kMaxRedMaxBlocks)
    return violation("red_max_blocks",
                     "be in [0, " + std::to_string(kMaxRedMaxBlocks) +
                         "] (0: no reduction epilogue)",
                     c.redMaxBlocks);
  if (!parseEpilogue(epilogueName(c.epilogue)))
    return violation("epilogue",
                     "be register, reduction, in_place or parked (0 to 3)",
                     int(c.epilogue));
  if (c.epilogue == Epilogue::Reduction && c.redMaxBlocks == 0)
    return violation("red_max_blocks",
                     "be > 0 with epilogue = reduction (the longest tile, in "
                     "K blocks, that reduces)",
                     c.redMaxBlocks);
  if (c.epilogue != Epilogue::Reduction && c.redMaxBlocks != 0)
    return violation("red_max_blocks",
                     std::string("be 0 with epilogue = ") +
                         epilogueName(c.epilogue) +
                         " (only the reduction epilogue has a bound)",
                     c.redMaxBlocks);
  if (c.quadB != 0 && c.quadB != 1)
    return violation("quad_b", "be 0 or 1", c.quadB);
  if (c.quadB && c.blockN % (16 * c.clusterM) != 0)
    return violation(
        "block_n",
        "be a multiple of 16 * cluster_m = " + std::to_string(16 * c.clusterM) +
            " with quad_b = 1 (each CTA's box of B is whole "
            "16-row quad groups)",
        c.blockN);
  if (c.quadB && isInPlaceKernel(c.epilogue))
    return violation("quad_b",
                     std::string("be 0 with epilogue = ") +
                         epilogueName(c.epilogue) +
                         " (quad-ordered B measured slower in the in-place "
                         "kernel; not built)",
                     c.quadB);
  if (c.unsafe & ~kUnsafeMask)
    return violation("unsafe",
                     "be a set of skip_descriptor_drain (1) and "
                     "skip_proxy_fence (2)",
                     c.unsafe);
  if (c.epilogue == Epilogue::Parked)
    return checkPark(c);
  return "";
}
