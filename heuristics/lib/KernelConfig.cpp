//===- KernelConfig.cpp - K-grouped FP8 kernel configurations -------------===//
//
// The cost model behind selectKGroupedConfig is described, with its
// constants, in docs/Heuristics.md; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Heuristics/MGroupedConfig.h"
#include "Rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

using namespace dgemm::heuristics;
using dgemm::heuristics::detail::ceilDiv;
using dgemm::heuristics::detail::violation;

namespace {

// Kernel-layout facts (docs/KernelABI.md).
constexpr int kBlockK = 128;          // FP8 1D1D: one scale per 128 K
constexpr int kSmemAlignSlack = 1024; // dynamic smem base rounded up to 1 KiB
constexpr int kScaleSliceAlign = 128; // sfa/sfb slices start 128-byte aligned
constexpr int kBarrierBytesPerStage = 2 * 8; // full + empty mbarrier
constexpr int kMaxStages = 8;
constexpr int kThreadsPerWarpgroup = 128;
constexpr int kMaxBlockNForRegisters = 192;
// Three math warpgroups (block_m = 192) have 160 registers per thread
// (setmaxnreg; the producer keeps 32): a fragment and the sum, block_n FP32
// registers, leave room for addressing up to 128 columns.
constexpr int kMaxBlockNThreeWarpgroups = 128;
// Upper bound of red_max_blocks: 2^20 K blocks (K = 2^27) exceeds any
// group's K, so larger bounds would select nothing more.
constexpr int kMaxRedMaxBlocks = 1 << 20;
// The raster band (selectRasterBand): m-blocks per band, and the smallest
// mean per-group B (bytes) that takes it. 24 MiB: about half the L2.
constexpr int kRasterBand = 8;
constexpr int64_t kRasterBandMinBBytes = int64_t(24) << 20;

// Candidate tiles. Every blockN is a multiple of 16 and divides 7168 or 2048
// (the DeepGEMM benchmark N values) or sits between those that do, so wave
// quantization can be traded against per-tile overhead. Listed in preference
// order, which is also the tie-break order.
constexpr int kCandidateBlockM[] = {128, 64};
// Three math warpgroups (block_m = 192) measured between 0.7% faster and 5%
// slower than the 128-row tiles on the large benchmark shapes and 9-13%
// slower on the seed (bench/NOTES.md, section 11), so the selection does not
// consider them; bundles hold them for the DGEMM_BLOCK_M override.
constexpr int kExtraBlockM = 192;
constexpr int kCandidateBlockN[] = {192, 160, 144, 128, 112, 96, 64};

// Cost-model constants (assumptions, not measurements; docs/Heuristics.md).
// Dense FP8 WGMMA peak of an H100/H200 SM: 1979 TFLOP/s over 132 SMs.
constexpr double kPeakFlopsPerSmPerUs = 1979e6 / 132;
// Sustained fraction of peak for two math warpgroups (blockM = 128).
constexpr double kMathEfficiencyBm128 = 0.75;
// One math warpgroup cannot hide the FP32 scale promotion behind the next
// WGMMA, so blockM = 64 runs at this fraction of the blockM = 128 rate.
constexpr double kRelativeRateBm64 = 0.6;
// Epilogue: read C and write D, FP32, with HBM (~4 TB/s) shared by all SMs.
constexpr double kHbmBytesPerUs = 4e6;
constexpr double kEpilogueBytesPerElement = 2 * 4;
// Filling the TMA pipeline of a tile that has K > 0 (about one HBM round trip
// plus the first stages).
constexpr double kPipelineFillUs = 1.0;
// Makespans within this relative distance of the best count as a tie, broken
// by the preference order above: the model is not more accurate than that.
constexpr double kTieTolerance = 0.01;
// Assumed K per group when the problem gives neither ks nor an expectation.
constexpr int64_t kDefaultKPerGroup = 4096;
// The makespan model keeps one accumulator per CTA: more SMs than this are
// no device, and would only cost memory.
constexpr int64_t kMaxModelledSMs = 65536;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Saturating arithmetic: sizes derived from a config or problem that the
// checks reject must still be computable (and compare as too large), never
// overflow.
int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? kInt64Max : kInt64Min;
  return r;
}

int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? kInt64Min : kInt64Max;
  return r;
}

/// `value` rounded up to a multiple of `align` (> 0), saturating.
int64_t alignTo(int64_t value, int64_t align) {
  return satAdd(value, align - 1) / align * align;
}

/// `count` consecutive groups with the same K.
struct GroupRun {
  int64_t k;
  int64_t count;
};

/// Per-group K as the model sees it: ks when given (one run per group, in
/// order), else one run of numGroups groups of the expectation, so that a
/// huge group count costs no memory. Sums over runs are exact within the
/// limits of checkProblem (at most 2^31 groups of 2^24 blocks).
std::vector<GroupRun> groupRuns(const KGroupedProblem &problem) {
  std::vector<GroupRun> runs;
  if (!problem.ks.empty()) {
    runs.reserve(problem.ks.size());
    for (int64_t k : problem.ks)
      runs.push_back({std::max<int64_t>(k, 0), 1});
    return runs;
  }
  int64_t k = problem.expectedKPerGroup > 0 ? problem.expectedKPerGroup
                                            : kDefaultKPerGroup;
  if (problem.numGroups > 0)
    runs.push_back({k, problem.numGroups});
  return runs;
}

std::vector<GroupRun> runsOf(const std::vector<int64_t> &ks) {
  std::vector<GroupRun> runs;
  runs.reserve(ks.size());
  for (int64_t k : ks)
    runs.push_back({std::max<int64_t>(k, 0), 1});
  return runs;
}

int64_t groupCount(const std::vector<GroupRun> &runs) {
  int64_t groups = 0;
  for (const GroupRun &run : runs)
    groups = satAdd(groups, run.count);
  return groups;
}

/// The 128-deep K blocks (each group's K rounded up) of the groups of at
/// most `maxBlocks` blocks.
int64_t blocksInGroupsUpTo(const std::vector<GroupRun> &runs,
                           int64_t maxBlocks) {
  int64_t sum = 0;
  for (const GroupRun &run : runs)
    if (int64_t blocks = ceilDiv(run.k, kBlockK); blocks <= maxBlocks)
      sum = satAdd(sum, satMul(blocks, run.count));
  return sum;
}

/// A piecewise-linear curve through (blocks, time) points, continued past
/// the last point with `slope`; 0 for an empty tile.
template <size_t N>
double interpolate(const std::pair<double, double> (&points)[N], double slope,
                   int64_t blocks) {
  if (blocks <= 0)
    return 0;
  double k = static_cast<double>(blocks);
  if (k <= points[0].first)
    return points[0].second;
  for (size_t i = 1; i < N; ++i)
    if (k <= points[i].first) {
      auto [k0, t0] = points[i - 1];
      auto [k1, t1] = points[i];
      return t0 + (t1 - t0) * (k - k0) / (k1 - k0);
    }
  return points[N - 1].second + slope * (k - points[N - 1].first);
}

KernelConfig makeCandidate(int blockM, int blockN, const Target &target) {
  KernelConfig config;
  config.blockM = blockM;
  config.blockN = blockN;
  config.blockK = kBlockK;
  config.stages = maxStages(blockM, blockN, target);
  config.descSlots = 2;
  config.mathWarpgroups = blockM / 64;
  config.numSMs = target.numSMs;
  return config;
}

} // namespace

double dgemm::heuristics::inPlaceTileTime(int64_t blocks, bool parked) {
  // Microseconds per group of 1024 tiles of 128 x 128 on 132 SMs (8 or 16
  // groups of 4096 x 4096) on an H100, in place: uniform groups of 9-16
  // blocks (bench/NOTES.md section 23) and groups of two lengths, 2 + 16,
  // 4 + 24 and 8 + 32 blocks, each length's time solved from two calls
  // (section 24). Only the ratio of the two curves is used. The parked
  // kernel's time is flat from 8 to 12 blocks (its workers' epilogue bounds
  // it); the register kernel's exposed epilogue costs less until then, its
  // block loop about 4% more on long tiles.
  static constexpr std::pair<double, double> kRegister[6] = {
      {1, 50}, {4, 52}, {8, 58.5}, {12, 72.9}, {16, 87.3}, {32, 154.5}};
  static constexpr std::pair<double, double> kParked[6] = {
      {1, 64}, {4, 67.8}, {8, 70.4}, {12, 70.4}, {16, 82}, {32, 150}};
  return parked ? interpolate(kParked, 4.4, blocks)
                : interpolate(kRegister, 4.6, blocks);
}

Calibration dgemm::heuristics::calibrationFor(const Target &target) {
  return target.memoryBandwidthGBps >= kH200MinBandwidthGBps
             ? Calibration::H200
             : Calibration::H100;
}

const char *dgemm::heuristics::calibrationName(Calibration calibration) {
  return calibration == Calibration::H200 ? "H200" : "H100";
}

double dgemm::heuristics::inPlaceTileTime(int64_t blocks,
                                          InPlaceEpilogue epilogue,
                                          Calibration calibration) {
  if (calibration == Calibration::H100)
    return inPlaceTileTime(blocks, epilogue == InPlaceEpilogue::Parked);
  // Microseconds per group of 1024 tiles of 128 x 128 on 132 SMs of an H200,
  // in place, 128 columns (the register kernel paired where N >= 4096), from
  // one call of scripts/device_sweep.sh (bench/NOTES.md section 26): uniform
  // groups of 4, 9-12 and 16 blocks, and groups of two lengths (2 + 16,
  // 4 + 24, 8 + 32, 4 + 16, 6 + 12, 8 + 16, 2 + 10 blocks), each length's
  // time solved from two calls. Unlike the H100's, the park's tile time is
  // not flat up to 12 blocks (our reading: with 4.8 TB/s its workers'
  // epilogue no longer bounds it), and it overtakes the register epilogue
  // near 7 blocks. The reduction
  // kernel's reductions (tiles of at most 8 blocks) beat the register
  // epilogue from 4 blocks; its longer tiles run the register epilogue in a
  // block loop 2.4% slower (uniform 9-16 blocks). Past the last point the
  // park's block loop is taken 4% faster per block than the register one
  // (section 9: the in-place kernel 3-8% faster on long tiles).
  static constexpr std::pair<double, double> kRegister[8] = {
      {1, 35},    {2, 36.2},  {4, 39.2},   {8, 54.4},
      {12, 70.5}, {16, 87.0}, {24, 119.8}, {32, 153.9}};
  static constexpr std::pair<double, double> kParked[9] = {
      {1, 42.5},  {2, 43.0},  {4, 44.5},   {6, 45.0},  {8, 49.3},
      {12, 63.3}, {16, 79.4}, {24, 107.9}, {32, 145.9}};
  static constexpr std::pair<double, double> kReduced[5] = {
      {1, 36.5}, {2, 37.0}, {4, 37.5}, {6, 42.4}, {8, 51.0}};
  constexpr double kRegisterSlope = 4.26, kParkedSlope = kRegisterSlope / 1.04;
  constexpr double kReductionKernelLoop = 1.024;
  switch (epilogue) {
  case InPlaceEpilogue::Register:
    return interpolate(kRegister, kRegisterSlope, blocks);
  case InPlaceEpilogue::Parked:
    return interpolate(kParked, kParkedSlope, blocks);
  case InPlaceEpilogue::Reduction:
    return blocks <= kRedEpilogueTileBlocks
               ? interpolate(kReduced, 0, blocks)
               : kReductionKernelLoop *
                     interpolate(kRegister, kRegisterSlope, blocks);
  }
  return 0;
}

/// The modelled time (inPlaceTileTime) of the groups of at most `maxBlocks`
/// 128-deep K blocks: every group has the same tiles, so their times add up.
static double inPlaceTimeUpTo(const std::vector<GroupRun> &ks,
                              int64_t maxBlocks, InPlaceEpilogue epilogue,
                              Calibration calibration) {
  double time = 0;
  for (const GroupRun &run : ks)
    if (int64_t blocks = ceilDiv(run.k, kBlockK); blocks <= maxBlocks)
      time += static_cast<double>(run.count) *
              inPlaceTileTime(blocks, epilogue, calibration);
  return time;
}

static double inPlaceTime(const std::vector<GroupRun> &ks,
                          InPlaceEpilogue epilogue, Calibration calibration) {
  return inPlaceTimeUpTo(ks, kInt64Max, epilogue, calibration);
}

/// registerBeatsPark, given the register epilogue's time of all of `ks`.
static bool registerBeatsParkAt(const std::vector<GroupRun> &ks,
                                double registerTime) {
  return registerTime > 0 &&
         registerTime <=
             (1 - kRegisterOverParkMargin) *
                 inPlaceTime(ks, InPlaceEpilogue::Parked, Calibration::H100);
}

bool dgemm::heuristics::registerBeatsPark(const std::vector<int64_t> &ks) {
  std::vector<GroupRun> runs = runsOf(ks);
  return registerBeatsParkAt(
      runs, inPlaceTime(runs, InPlaceEpilogue::Register, Calibration::H100));
}

static InPlaceEpilogue fastestEpilogueH200(const std::vector<GroupRun> &ks) {
  const Calibration h200 = Calibration::H200;
  double parked = inPlaceTime(ks, InPlaceEpilogue::Parked, h200);
  double reg = inPlaceTime(ks, InPlaceEpilogue::Register, h200);
  double reduced = inPlaceTime(ks, InPlaceEpilogue::Reduction, h200);
  const double keep = 1 - kRegisterOverParkMargin;
  // The register epilogue unless the reduction kernel beats it by the
  // margin; then whichever of the two beats the park by the margin.
  InPlaceEpilogue best = InPlaceEpilogue::Register;
  double bestTime = reg;
  if (reduced <= keep * reg) {
    best = InPlaceEpilogue::Reduction;
    bestTime = reduced;
  }
  return bestTime > 0 && bestTime <= keep * parked ? best
                                                   : InPlaceEpilogue::Parked;
}

InPlaceEpilogue
dgemm::heuristics::fastestInPlaceEpilogueH200(const std::vector<int64_t> &ks) {
  return fastestEpilogueH200(runsOf(ks));
}

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
  }
  return "invalid";
}

std::optional<Kind> dgemm::heuristics::parseKind(std::string_view name) {
  for (Kind k : {Kind::Normal, Kind::MGroupedContiguous, Kind::MGroupedMasked,
                 Kind::KGroupedContiguous})
    if (name == kindName(k))
      return k;
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
  return os.str();
}

bool KernelConfig::operator==(const KernelConfig &o) const {
  return kind == o.kind && blockM == o.blockM && blockN == o.blockN && blockK == o.blockK &&
         stages == o.stages && descSlots == o.descSlots &&
         mathWarpgroups == o.mathWarpgroups && clusterM == o.clusterM &&
         clusterN == o.clusterN && swizzleA == o.swizzleA &&
         swizzleB == o.swizzleB && numSMs == o.numSMs &&
         epilogue == o.epilogue && redMaxBlocks == o.redMaxBlocks &&
         quadB == o.quadB && unsafe == o.unsafe;
}

/// The layout of a tile, K block depth, stage count and epilogue.
static SmemLayout layoutFor(int64_t blockM, int64_t blockN, int64_t blockK,
                            int64_t stages, bool parked, bool stagedSfb = true) {
  SmemLayout l;
  l.stages = stages;
  l.aBytes = satMul(blockM, blockK);
  l.bBytes = satMul(blockN, blockK);
  l.sfaBytes = alignTo(satMul(blockM, 4), kScaleSliceAlign);
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
  return layoutFor(c.blockM, c.blockN, c.blockK, c.stages,
                   c.epilogue == Epilogue::Parked,
                   /*stagedSfb=*/c.kind == Kind::KGroupedContiguous);
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
  if (c.kind != Kind::KGroupedContiguous) {
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

double
dgemm::heuristics::estimateKGroupedMakespanUs(const KGroupedProblem &problem,
                                              const KernelConfig &config,
                                              const Target &target) {
  constexpr double kUnmodelled = std::numeric_limits<double>::infinity();
  if (!checkProblem(problem).empty() || config.blockM < 1 ||
      config.blockN < 1 || target.numSMs > kMaxModelledSMs)
    return kUnmodelled;
  std::vector<GroupRun> ks = groupRuns(problem);
  if (problem.m == 0 || problem.n == 0 || ks.empty() || target.numSMs < 1)
    return 0;
  // At most 2^31 * 2^31 = 2^62 tiles per group (checkProblem).
  int64_t tilesPerGroup =
      ceilDiv(problem.m, config.blockM) * ceilDiv(problem.n, config.blockN);
  int64_t numTiles = satMul(tilesPerGroup, groupCount(ks));
  int64_t grid = std::min<int64_t>(target.numSMs, numTiles);

  double mathRate = kPeakFlopsPerSmPerUs * kMathEfficiencyBm128 *
                    (config.blockM == 64 ? kRelativeRateBm64 : 1.0);
  double tileElems = static_cast<double>(config.blockM) * config.blockN;
  double epilogueUs =
      tileElems * kEpilogueBytesPerElement / (kHbmBytesPerUs / target.numSMs);

  // Tile t runs on CTA t % grid and a run's tiles are contiguous and equally
  // expensive, so each run of c groups adds its cost q = c * T / grid times
  // to every CTA and once more to a cyclic run of r = c * T % grid CTAs:
  // O(runs + grid) instead of O(tiles). c * T may exceed 64 bits, so q is
  // taken as c * (T / grid) + c * (T % grid) / grid, its first term in
  // double, and only tile indices modulo grid are kept.
  const int64_t wholeRounds = tilesPerGroup / grid;
  const int64_t partRound = tilesPerGroup % grid; // < grid <= 2^16
  std::vector<double> extra(grid + 1, 0.0);
  double everyCta = 0;
  int64_t first = 0; // the run's first tile, modulo grid
  for (const GroupRun &run : ks) {
    // Padded K: the last K block is loaded and multiplied whole.
    double paddedK = static_cast<double>(ceilDiv(run.k, kBlockK) * kBlockK);
    double cost = paddedK * 2 * tileElems / mathRate + epilogueUs +
                  (run.k > 0 ? kPipelineFillUs : 0.0);
    int64_t partTiles = run.count * partRound; // < 2^31 * 2^16
    double rounds =
        static_cast<double>(run.count) * static_cast<double>(wholeRounds) +
        static_cast<double>(partTiles / grid);
    everyCta += rounds * cost;
    int64_t rem = partTiles % grid;
    int64_t begin = first;
    int64_t end = begin + rem;
    extra[begin] += cost;
    if (end <= grid) {
      extra[end] -= cost;
    } else {
      extra[grid] -= cost;
      extra[0] += cost;
      extra[end - grid] -= cost;
    }
    first = (first + rem) % grid;
  }
  double running = 0, worst = 0;
  for (int64_t cta = 0; cta < grid; ++cta) {
    running += extra[cta];
    worst = std::max(worst, running);
  }
  return everyCta + worst;
}

/// Narrowest output (N) for which selectKGroupedConfig multicasts B.
constexpr int64_t kMulticastMinN = 4096;

bool dgemm::heuristics::quadBFits(const KernelConfig &config, int64_t n,
                                  const Target &target) {
  // Quad-ordered B in every kernel with a register or reduction epilogue:
  // on the H200 it made the register epilogue 2-13% faster and the seed's
  // reduction epilogue 4-5% (16-byte accesses without shuffles), but the
  // in-place kernel's block loop 2-7% slower (the 5-D B box, bench/NOTES.md
  // section 12), so that one keeps B in order.
  // checkConfig holds the rules (the width, and no in-place kernel).
  KernelConfig quad = config;
  quad.quadB = 1;
  return n % 16 == 0 && checkConfig(quad, target).empty();
}

/// One candidate per tile shape, without multicast, in preference order.
static std::vector<KernelConfig> tileCandidates(const Target &target) {
  std::vector<KernelConfig> candidates;
  for (int blockM : kCandidateBlockM) {
    for (int blockN : kCandidateBlockN) {
      KernelConfig config = makeCandidate(blockM, blockN, target);
      if (checkConfig(config, target).empty())
        candidates.push_back(config);
    }
  }
  return candidates;
}

KernelConfig
dgemm::heuristics::selectKGroupedConfig(const KGroupedProblem &problem,
                                        const Target &target) {
  std::vector<KernelConfig> candidates = tileCandidates(target);
  if (candidates.empty()) // Nothing fits; let checkConfig report why.
    return makeCandidate(128, 128, target);
  // Sizes the kernel cannot take: a valid kernel, so that the caller's
  // argument checks report the problem instead of the configuration.
  if (!checkProblem(problem).empty())
    return candidates.front();

  std::vector<double> makespans;
  for (const KernelConfig &c : candidates)
    makespans.push_back(estimateKGroupedMakespanUs(problem, c, target));
  double best = *std::min_element(makespans.begin(), makespans.end());
  // Candidates are in preference order, so the first near-best one wins.
  KernelConfig chosen = candidates.front();
  for (size_t i = 0; i < candidates.size(); ++i)
    if (makespans[i] <= best * (1 + kTieTolerance)) {
      chosen = candidates[i];
      break;
    }
  // Where the K blocks are: the short-group rules below compare the blocks
  // of the groups up to a length with all blocks. Within checkProblem's
  // limits the sums below stay under 2^56, so doubling them is safe.
  const std::vector<GroupRun> ks = groupRuns(problem);
  const int64_t numGroups = groupCount(ks);
  const int64_t blocks = blocksInGroupsUpTo(ks, kInt64Max);
  const int64_t blocksUpTo8 = blocksInGroupsUpTo(ks, kRedEpilogueTileBlocks);
  // The measured rules below come in two calibrations (calibrationFor).
  const bool onH200 = calibrationFor(target) == Calibration::H200;
  // The register epilogue's modelled time (inPlaceTileTime, the H100's
  // curve) of every group; in place, where the reduction rules below do not
  // apply, whether it beats the parked kernel's.
  const double registerTime =
      inPlaceTime(ks, InPlaceEpilogue::Register, Calibration::H100);
  // On the H200 calibration the in-place epilogue is decided by modelled
  // time among all three (fastestInPlaceEpilogueH200).
  const InPlaceEpilogue h200Epilogue = onH200 && problem.inPlace
                                           ? fastestEpilogueH200(ks)
                                           : InPlaceEpilogue::Parked;
  const bool registerOverPark =
      problem.inPlace && (onH200 ? h200Epilogue != InPlaceEpilogue::Parked
                                 : registerBeatsParkAt(ks, registerTime));
  // Short groups: narrower tiles than the model's. Its per-tile fill charge
  // favours wide tiles, but with groups of a few K blocks each tile is
  // mostly epilogue, and on an H100 the 64-column tile was 2-16% faster than
  // the model's 128 or 192 columns on every shape whose groups have 1-6
  // blocks (ten shapes in place, five with a separate c), and the
  // 128-column one 4-19% faster than 192 columns at 7-8 blocks, where 64
  // columns were slower (bench/NOTES.md section 22; on the H200, section 7
  // found 96 and 160 columns faster than 192 on short groups too). 64
  // columns by where the blocks are; only for 128-row tiles and where the
  // narrower tile pads N no more than the chosen one. 128
  // columns where the groups of at most kNarrowTileTimeMaxBlocks blocks hold
  // at least half of the modelled time (the register epilogue's tile times,
  // inPlaceTileTime: a short tile costs more than its blocks), and in place
  // wherever the register epilogue replaces the park below: 128 columns were
  // 1.3-1.5% faster than 192 at 12 and 16 blocks with a separate c (section
  // 22), 4-10% faster than 160 or 192 on three of five log-normal calls
  // (section 24), and at 9-11 blocks in place the 192-column register
  // kernel was 0-3% faster than the park and the 128-column one 3-13%
  // (section 23). On the H200 (section 26) 128 columns were 6-9% faster
  // than 64 at 4-6 blocks, in place and with a separate c, and within 1.5%
  // of them at 1-2 blocks: 64 columns take groups of 1-2 blocks there, and
  // in place 128 columns wherever the register or reduction epilogue is
  // chosen.
  {
    int64_t narrowBlocks = blocksInGroupsUpTo(
        ks, onH200 ? kNarrowTileMaxBlocksH200 : kNarrowTileMaxBlocks);
    // The share of time is weighed with the H100 curve on both
    // calibrations: with it the H200 sweep's calls with a separate c came
    // within 1.4% of their fastest width (section 26).
    double shortTime =
        inPlaceTimeUpTo(ks, kNarrowTileTimeMaxBlocks, InPlaceEpilogue::Register,
                        Calibration::H100);
    int narrow = 0;
    if (narrowBlocks > 0 && 2 * narrowBlocks >= blocks)
      narrow = 64;
    else if (registerOverPark ||
             (shortTime > 0 && 2 * shortTime >= registerTime))
      narrow = 128;
    if (narrow > 0 && chosen.blockM == 128 && chosen.blockN > narrow &&
        ceilDiv(problem.n, narrow) * narrow <=
            ceilDiv(problem.n, chosen.blockN) * chosen.blockN)
      for (const KernelConfig &c : candidates)
        if (c.blockM == 128 && c.blockN == narrow) {
          chosen = c;
          break;
        }
  }
  // In place, tiles of at most 8 K blocks add their sum to d with reductions
  // instead of loading c first: 1-11% faster on the H200, but the second
  // epilogue's code makes the block loop of longer tiles 4-10% slower, so
  // it is a kernel of its own, chosen when the tiles that take the
  // reductions carry at least as many blocks (about as much time: every
  // group has the same tiles) as those that do not (bench/NOTES.md,
  // section 7). Otherwise the in-place kernel, which reduces every tile and
  // has no register epilogue: 3-8% faster than the register epilogue on
  // long tiles (bench/NOTES.md, section 9).
  //
  // Shorter still, the register epilogue (loading c, which is d) beats the
  // reductions: on an H100, groups of 1-6 blocks ran up to 6% faster with
  // it than with the reduction kernel (one shape of 5 blocks 0.7% slower),
  // 7 blocks tied and 8 blocks ran 1-10% slower (bench/NOTES.md sections
  // 21 and 22, two calls each, both orders); on the H200 the seed shape
  // (groups of 1-2 blocks) ran 1.2% faster with it (section 19). So a call
  // whose groups of at most kRegisterEpilogueMaxBlocks blocks hold at least
  // half of all blocks keeps the register epilogue.
  //
  // Otherwise the register epilogue against the in-place kernel's parked
  // form, by modelled time rather than blocks (registerBeatsPark): the
  // park's tile time is flat up to 12 blocks, so a short tile costs it
  // nearly as much as a 12-block one. On an H100 the register epilogue was
  // 3-13% faster than the park at 9-11 blocks, 1.5-5% slower at 12 and 7%
  // at 16 (bench/NOTES.md section 23), and 3-15% faster on calls whose
  // short groups held only 11-47% of the blocks (2 + 16, 4 + 24, 8 + 32
  // blocks; section 24), where counting blocks chose the park.
  //
  // On the H200 calibration all of this is by modelled time
  // (fastestInPlaceEpilogueH200): there the park overtakes the register
  // epilogue near 7 blocks instead of 12, and the reduction kernel beats
  // the register epilogue from 4 blocks (bench/NOTES.md section 26).
  if (problem.inPlace && onH200) {
    if (h200Epilogue == InPlaceEpilogue::Reduction) {
      chosen.epilogue = Epilogue::Reduction;
      chosen.redMaxBlocks = kRedEpilogueTileBlocks;
    } else if (h200Epilogue == InPlaceEpilogue::Parked) {
      chosen.epilogue = Epilogue::InPlace;
    }
  } else if (problem.inPlace) {
    int64_t registerBlocks = blocksInGroupsUpTo(ks, kRegisterEpilogueMaxBlocks);
    if (registerBlocks > 0 && 2 * registerBlocks >= blocks) {
      // The register epilogue, as with a separate c.
    } else if (blocksUpTo8 > 0 && 2 * blocksUpTo8 >= blocks) {
      chosen.epilogue = Epilogue::Reduction;
      chosen.redMaxBlocks = kRedEpilogueTileBlocks;
    } else if (registerOverPark) {
      // The register epilogue again.
    } else {
      chosen.epilogue = Epilogue::InPlace;
    }
  }
  // Pairs of CTAs on neighbouring m-blocks share the B tile by TMA
  // multicast, halving its L2 reads. Only with an even m-block count (an
  // odd one leaves the last pair's second CTA computing a tile past M), and
  // only for wide outputs: on the H200 it gained 3-11% at N = 7168 and
  // nothing (or lost) at N = 2048 (bench/NOTES.md). Not for the in-place
  // kernel, which measured 0-2.5% faster without it at N = 7168 (section 9).
  int64_t mBlocks = ceilDiv(problem.m, chosen.blockM);
  KernelConfig paired = chosen;
  paired.clusterM = 2;
  if (!isInPlaceKernel(chosen.epilogue) && mBlocks % 2 == 0 &&
      problem.n >= kMulticastMinN && checkConfig(paired, target).empty())
    chosen = paired;
  // Parked tiles: the math warpgroups hand each tile's sums to the
  // producer warpgroup's spare warps through shared memory and go on to the
  // next tile, so the in-place epilogue overlaps the next tile's block loop.
  // On the H200 the 128-column parked kernel (4 stages) was 3-8% faster
  // than the 192-column in-place kernel with mean K per group of 2048 and
  // 4096, and 1.5% slower to 1% faster at 8192 (bench/NOTES.md sections 15
  // and 16); the parked 192-column kernel (3 stages) was slower than it on
  // every such shape. Short groups make the epilogue a larger share of each
  // tile. The overlap needs a next tile: at least two per SM.
  if (chosen.epilogue == Epilogue::InPlace && chosen.blockM == 128) {
    KernelConfig parked = chosen;
    parked.blockN = 128;
    parked.epilogue = Epilogue::Parked;
    parked.stages = maxParkedStages(parked.blockM, parked.blockN, target);
    int64_t tiles = satMul(ceilDiv(problem.m, parked.blockM) *
                               ceilDiv(problem.n, parked.blockN),
                           numGroups);
    if (numGroups > 0 && blocks <= kParkMaxMeanBlocks * numGroups &&
        tiles >= 2 * static_cast<int64_t>(target.numSMs) &&
        parkFits(parked, target) && checkConfig(parked, target).empty())
      chosen = parked;
  }
  chosen.quadB = quadBFits(chosen, problem.n, target) ? 1 : 0;
  return chosen;
}

std::vector<KernelConfig>
dgemm::heuristics::candidateKGroupedConfigs(const Target &target) {
  // Every tile shape, then the same shapes with cluster_m = 2, then all of
  // them with the reduction epilogue, then every tile shape as an in-place
  // kernel (never paired).
  std::vector<KernelConfig> candidates = tileCandidates(target);
  size_t tiles = candidates.size();
  for (size_t i = 0; i < tiles; ++i) {
    KernelConfig paired = candidates[i];
    paired.clusterM = 2;
    if (checkConfig(paired, target).empty())
      candidates.push_back(paired);
  }
  size_t registerEpilogue = candidates.size();
  for (size_t i = 0; i < registerEpilogue; ++i) {
    KernelConfig reducing = candidates[i];
    reducing.epilogue = Epilogue::Reduction;
    reducing.redMaxBlocks = kRedEpilogueTileBlocks;
    candidates.push_back(reducing);
  }
  for (size_t i = 0; i < tiles; ++i) {
    KernelConfig inPlace = candidates[i];
    inPlace.epilogue = Epilogue::InPlace;
    candidates.push_back(inPlace);
  }
  // The three-warpgroup tiles, never selected (kExtraBlockM), in the same
  // three epilogue forms, without multicast.
  for (int blockN : kCandidateBlockN) {
    KernelConfig config = makeCandidate(kExtraBlockM, blockN, target);
    if (!checkConfig(config, target).empty())
      continue;
    candidates.push_back(config);
    KernelConfig reducing = config;
    reducing.epilogue = Epilogue::Reduction;
    reducing.redMaxBlocks = kRedEpilogueTileBlocks;
    candidates.push_back(reducing);
    KernelConfig inPlace = config;
    inPlace.epilogue = Epilogue::InPlace;
    candidates.push_back(inPlace);
  }
  // Then every kernel with a register or reduction epilogue again with
  // quad-ordered B, where checkConfig allows it (its width; never the
  // in-place kernel), as quadBFits decides.
  size_t natural = candidates.size();
  for (size_t i = 0; i < natural; ++i) {
    KernelConfig quad = candidates[i];
    quad.quadB = 1;
    if (checkConfig(quad, target).empty())
      candidates.push_back(quad);
  }
  // Then every in-place kernel that can park its tiles, parked, with the
  // most stages that fit next to the park.
  for (size_t i = 0; i < natural; ++i) {
    KernelConfig parked = candidates[i];
    if (parked.epilogue != Epilogue::InPlace)
      continue;
    parked.epilogue = Epilogue::Parked;
    parked.stages = maxParkedStages(parked.blockM, parked.blockN, target);
    if (parkFits(parked, target) && checkConfig(parked, target).empty())
      candidates.push_back(parked);
  }
  return candidates;
}

int dgemm::heuristics::selectRasterBand(const KGroupedProblem &problem) {
  // Bands of 8 m-blocks where a group's B (N x mean K bytes of FP8) is too
  // large for the L2 to keep between waves: a row-order wave then reads all
  // of it from DRAM again. Measured (bench/NOTES.md section 20, H100,
  // interleaved): 9.4% faster at 4 x 4096x7168 (B 61 MB per group) and
  // 5.6% at 8 x 4096x7168 (32 MB); 1-2% slower at 16 x 4096x7168 (15 MB)
  // and unchanged within 1% at 4 and 8 x 7168x2048 (17 and 9 MB). Bands of
  // 16 matched 8 on the wide shapes and were slightly slower elsewhere.
  if (!checkProblem(problem).empty())
    return 0;
  std::vector<GroupRun> ks = groupRuns(problem);
  const int64_t numGroups = groupCount(ks);
  if (numGroups == 0 || problem.n < 1)
    return 0;
  // Within checkProblem's limits: sum(K) < 2^62, n * mean K < 2^62.
  int64_t sumK = 0;
  for (const GroupRun &run : ks)
    sumK += run.k * run.count;
  const int64_t meanBBytes = problem.n * (sumK / numGroups);
  return meanBBytes >= kRasterBandMinBBytes ? kRasterBand : 0;
}

std::string dgemm::heuristics::checkOverrides(const ConfigOverrides &o) {
  auto bad = [](const char *key, const std::string &rule, int64_t got) {
    return std::string("the ") + key + " override must " + rule + ", got " +
           std::to_string(got);
  };
  if (o.descSlots && *o.descSlots != 1 && *o.descSlots != 2)
    return bad("desc_slots", "be 1 or 2", *o.descSlots);
  if (o.clusterM && *o.clusterM != 1 && *o.clusterM != 2)
    return bad("cluster_m", "be 1 or 2", *o.clusterM);
  if (o.quadB && *o.quadB != 0 && *o.quadB != 1)
    return bad("quad_b", "be 0 or 1", *o.quadB);
  if (o.blockM && *o.blockM != 64 && *o.blockM != 128 && *o.blockM != 192)
    return bad("block_m", "be 64, 128 or 192 (64 rows per math warpgroup)",
               *o.blockM);
  if (o.blockN && (*o.blockN < 8 || *o.blockN > kMaxBlockNForRegisters ||
                   *o.blockN % 8 != 0))
    return bad("block_n",
               "be a multiple of 8 in [8, " +
                   std::to_string(kMaxBlockNForRegisters) +
                   "] (WGMMA N, register budget)",
               *o.blockN);
  if (o.stages && *o.stages < 2)
    return bad("stages", "be >= 2", *o.stages);
  if (o.redMaxBlocks &&
      (*o.redMaxBlocks < 0 || *o.redMaxBlocks > kMaxRedMaxBlocks))
    return bad("red_max_blocks",
               "be in [0, " + std::to_string(kMaxRedMaxBlocks) + "]",
               *o.redMaxBlocks);
  if (o.epilogue && !parseEpilogue(epilogueName(*o.epilogue)))
    return bad("epilogue",
               "be register, reduction, in_place or parked (0 to 3)",
               int(*o.epilogue));
  if (o.epilogue && o.redMaxBlocks) {
    bool reduction = *o.epilogue == Epilogue::Reduction;
    if (reduction && *o.redMaxBlocks == 0)
      return bad("red_max_blocks",
                 "be > 0 with the epilogue override reduction", 0);
    if (!reduction && *o.redMaxBlocks != 0)
      return bad("red_max_blocks",
                 std::string("be 0 with the epilogue override ") +
                     epilogueName(*o.epilogue) +
                     " (only the reduction epilogue has a bound)",
                 *o.redMaxBlocks);
  }
  if (o.unsafe & ~kUnsafeMask)
    return bad("unsafe",
               "be a set of skip_descriptor_drain (1) and skip_proxy_fence (2)",
               o.unsafe);
  return "";
}

std::string dgemm::heuristics::applyOverrides(KernelConfig &config,
                                              const ConfigOverrides &o,
                                              const Target &target,
                                              const KGroupedProblem *problem) {
  if (std::string why = checkOverrides(o); !why.empty())
    return why;
  if (config.kind != Kind::KGroupedContiguous) {
    applyMGroupedOverrides(config, o, target);
    return "";
  }
  KernelConfig c = config;
  auto valid = [&](const KernelConfig &k) {
    return checkConfig(k, target).empty();
  };
  // Quad-ordered B is decided last, for the kernel the overrides leave.
  const int ownQuadB = c.quadB;
  c.quadB = 0;
  if (o.descSlots)
    c.descSlots = *o.descSlots;
  if (o.clusterM)
    c.clusterM = *o.clusterM;
  // CTA pairs cannot park: the pair's in-place kernel.
  unparkIfUnfit(c, target);
  if (o.blockN) {
    KernelConfig forced = c;
    forced.blockN = *o.blockN;
    unparkIfUnfit(forced, target);
    forced.stages = mostStages(forced, target);
    if (valid(forced))
      c = forced;
  }
  if (o.blockM) {
    KernelConfig forced = c;
    forced.blockM = *o.blockM;
    forced.mathWarpgroups = forced.blockM / 64;
    unparkIfUnfit(forced, target);
    forced.stages = mostStages(forced, target);
    // Multicast pairs need an even m-block count (known with a problem), and
    // none are built with three math warpgroups.
    if (forced.clusterM == 2 &&
        (forced.blockM == 192 || (problem && problem->m >= 0 &&
                                  ceilDiv(problem->m, forced.blockM) % 2 != 0)))
      forced.clusterM = 1;
    if (valid(forced))
      c = forced;
  }
  // Fewer stages than fit; applied again after every change of the most
  // that fit.
  auto applyStages = [&] {
    if (o.stages && *o.stages <= mostStages(c, target)) {
      KernelConfig forced = c;
      forced.stages = *o.stages;
      if (valid(forced))
        c = forced;
    }
  };
  applyStages();
  // A call with a separate c has only the register epilogue.
  if ((o.epilogue || o.redMaxBlocks) && (!problem || problem->inPlace)) {
    Epilogue epilogue;
    int redMaxBlocks = 0;
    if (o.epilogue) {
      epilogue = *o.epilogue;
      if (epilogue == Epilogue::Reduction)
        redMaxBlocks = o.redMaxBlocks.value_or(kRedEpilogueTileBlocks);
    } else {
      redMaxBlocks = *o.redMaxBlocks;
      epilogue = redMaxBlocks > 0 ? Epilogue::Reduction : Epilogue::Register;
    }
    KernelConfig forced = c;
    forced.epilogue = isInPlaceKernel(epilogue) ? Epilogue::InPlace : epilogue;
    forced.redMaxBlocks = redMaxBlocks;
    // The heuristics never pair the in-place kernel, so a bundle holds a
    // paired one only when built with cluster-m=2: keep the pair only when
    // the overrides asked for it.
    if (isInPlaceKernel(epilogue) && forced.clusterM == 2 &&
        o.clusterM.value_or(0) != 2)
      forced.clusterM = 1;
    forced.stages = mostStages(forced, target);
    if (valid(forced)) {
      c = forced;
      // Parked where the tile can park, else the in-place kernel.
      KernelConfig parked = c;
      parked.epilogue = Epilogue::Parked;
      parked.stages = mostStages(parked, target);
      if (epilogue == Epilogue::Parked && parkFits(parked, target) &&
          valid(parked))
        c = parked;
      applyStages();
    }
  }
  int quadB = o.quadB ? *o.quadB : problem ? 1 : ownQuadB;
  if (quadB) {
    KernelConfig quad = c;
    quad.quadB = 1;
    c.quadB = valid(quad) && (!problem || problem->n % 16 == 0) ? 1 : 0;
  }
  c.unsafe = o.unsafe;
  config = c;
  return "";
}
