//===- KGroupedSelect.cpp - Selecting a k-grouped configuration -----------===//
//
// The makespan model, selectKGroupedConfig with its measured rules, the
// candidate list of a bundle and the raster band. The cost model is
// described, with its constants, in docs/Heuristics.md; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "KGroupedModel.h"
#include "dgemm/Heuristics/KernelConfig.h"

#include <algorithm>
#include <limits>

using namespace dgemm::heuristics;
using namespace dgemm::heuristics::detail;

namespace {

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
// The makespan model keeps one accumulator per CTA: more SMs than this are
// no device, and would only cost memory.
constexpr int64_t kMaxModelledSMs = 65536;

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

namespace {

/// What the measured rules of selectKGroupedConfig read of a problem's
/// groups. Within checkProblem's limits the block sums stay under 2^56, so
/// doubling them is safe.
struct GroupFacts {
  std::vector<GroupRun> ks;
  int64_t numGroups;
  /// The 128-deep K blocks of all groups and of the groups of at most
  /// kRedEpilogueTileBlocks blocks: the short-group rules compare the blocks
  /// of the groups up to a length with all blocks.
  int64_t blocks;
  int64_t blocksUpTo8;
  /// The measured rules come in two calibrations (calibrationFor).
  bool onH200;
  /// The register epilogue's modelled time (inPlaceTileTime, the H100's
  /// curve) of every group.
  double registerTime;
  /// On the H200 calibration the in-place epilogue is decided by modelled
  /// time among all three (fastestInPlaceEpilogueH200); else Parked.
  InPlaceEpilogue h200Epilogue;
  /// In place, where the reduction rules do not apply, whether the register
  /// epilogue beats the parked kernel.
  bool registerOverPark;
};

} // namespace

/// The first candidate, in preference order, whose modelled makespan is
/// within kTieTolerance of the best.
static KernelConfig
chooseByMakespan(const KGroupedProblem &problem,
                 const std::vector<KernelConfig> &candidates,
                 const Target &target) {
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
  return chosen;
}

/// The group facts of `problem` (GroupFacts) on `target`.
static GroupFacts groupFactsOf(const KGroupedProblem &problem,
                               const Target &target) {
  GroupFacts f;
  f.ks = groupRuns(problem);
  f.numGroups = groupCount(f.ks);
  f.blocks = blocksInGroupsUpTo(f.ks, kInt64Max);
  f.blocksUpTo8 = blocksInGroupsUpTo(f.ks, kRedEpilogueTileBlocks);
  f.onH200 = calibrationFor(target) == Calibration::H200;
  f.registerTime =
      inPlaceTime(f.ks, InPlaceEpilogue::Register, Calibration::H100);
  f.h200Epilogue = f.onH200 && problem.inPlace ? fastestEpilogueH200(f.ks)
                                               : InPlaceEpilogue::Parked;
  f.registerOverPark =
      problem.inPlace && (f.onH200 ? f.h200Epilogue != InPlaceEpilogue::Parked
                                   : registerBeatsParkAt(f.ks, f.registerTime));
  return f;
}

/// Short groups: narrower tiles than the model's. Its per-tile fill charge
/// favours wide tiles, but with groups of a few K blocks each tile is
/// mostly epilogue, and on an H100 the 64-column tile was 2-16% faster than
/// the model's 128 or 192 columns on every shape whose groups have 1-6
/// blocks (ten shapes in place, five with a separate c), and the
/// 128-column one 4-19% faster than 192 columns at 7-8 blocks, where 64
/// columns were slower (bench/NOTES.md section 22; on the H200, section 7
/// found 96 and 160 columns faster than 192 on short groups too). 64
/// columns by where the blocks are; only for 128-row tiles and where the
/// narrower tile pads N no more than the chosen one. 128
/// columns where the groups of at most kNarrowTileTimeMaxBlocks blocks hold
/// at least half of the modelled time (the register epilogue's tile times,
/// inPlaceTileTime: a short tile costs more than its blocks), and in place
/// wherever the register epilogue replaces the park below: 128 columns were
/// 1.3-1.5% faster than 192 at 12 and 16 blocks with a separate c (section
/// 22), 4-10% faster than 160 or 192 on three of five log-normal calls
/// (section 24), and at 9-11 blocks in place the 192-column register
/// kernel was 0-3% faster than the park and the 128-column one 3-13%
/// (section 23). On the H200 (section 26) 128 columns were 6-9% faster
/// than 64 at 4-6 blocks, in place and with a separate c, and within 1.5%
/// of them at 1-2 blocks: 64 columns take groups of 1-2 blocks there, and
/// in place 128 columns wherever the register or reduction epilogue is
/// chosen.
static void narrowForShortGroups(KernelConfig &chosen,
                                 const std::vector<KernelConfig> &candidates,
                                 const KGroupedProblem &problem,
                                 const GroupFacts &f) {
  int64_t narrowBlocks = blocksInGroupsUpTo(
      f.ks, f.onH200 ? kNarrowTileMaxBlocksH200 : kNarrowTileMaxBlocks);
  // The share of time is weighed with the H100 curve on both
  // calibrations: with it the H200 sweep's calls with a separate c came
  // within 1.4% of their fastest width (section 26).
  double shortTime =
      inPlaceTimeUpTo(f.ks, kNarrowTileTimeMaxBlocks, InPlaceEpilogue::Register,
                      Calibration::H100);
  int narrow = 0;
  if (narrowBlocks > 0 && 2 * narrowBlocks >= f.blocks)
    narrow = 64;
  else if (f.registerOverPark ||
           (shortTime > 0 && 2 * shortTime >= f.registerTime))
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

/// In place, tiles of at most 8 K blocks add their sum to d with reductions
/// instead of loading c first: 1-11% faster on the H200, but the second
/// epilogue's code makes the block loop of longer tiles 4-10% slower, so
/// it is a kernel of its own, chosen when the tiles that take the
/// reductions carry at least as many blocks (about as much time: every
/// group has the same tiles) as those that do not (bench/NOTES.md,
/// section 7). Otherwise the in-place kernel, which reduces every tile and
/// has no register epilogue: 3-8% faster than the register epilogue on
/// long tiles (bench/NOTES.md, section 9).
///
/// Shorter still, the register epilogue (loading c, which is d) beats the
/// reductions: on an H100, groups of 1-6 blocks ran up to 6% faster with
/// it than with the reduction kernel (one shape of 5 blocks 0.7% slower),
/// 7 blocks tied and 8 blocks ran 1-10% slower (bench/NOTES.md sections
/// 21 and 22, two calls each, both orders); on the H200 the seed shape
/// (groups of 1-2 blocks) ran 1.2% faster with it (section 19). So a call
/// whose groups of at most kRegisterEpilogueMaxBlocks blocks hold at least
/// half of all blocks keeps the register epilogue.
///
/// Otherwise the register epilogue against the in-place kernel's parked
/// form, by modelled time rather than blocks (registerBeatsPark): the
/// park's tile time is flat up to 12 blocks, so a short tile costs it
/// nearly as much as a 12-block one. On an H100 the register epilogue was
/// 3-13% faster than the park at 9-11 blocks, 1.5-5% slower at 12 and 7%
/// at 16 (bench/NOTES.md section 23), and 3-15% faster on calls whose
/// short groups held only 11-47% of the blocks (2 + 16, 4 + 24, 8 + 32
/// blocks; section 24), where counting blocks chose the park.
///
/// On the H200 calibration all of this is by modelled time
/// (fastestInPlaceEpilogueH200): there the park overtakes the register
/// epilogue near 7 blocks instead of 12, and the reduction kernel beats
/// the register epilogue from 4 blocks (bench/NOTES.md section 26).
static void chooseInPlaceEpilogue(KernelConfig &chosen,
                                  const KGroupedProblem &problem,
                                  const GroupFacts &f) {
  if (problem.inPlace && f.onH200) {
    if (f.h200Epilogue == InPlaceEpilogue::Reduction) {
      chosen.epilogue = Epilogue::Reduction;
      chosen.redMaxBlocks = kRedEpilogueTileBlocks;
    } else if (f.h200Epilogue == InPlaceEpilogue::Parked) {
      chosen.epilogue = Epilogue::InPlace;
    }
  } else if (problem.inPlace) {
    int64_t registerBlocks =
        blocksInGroupsUpTo(f.ks, kRegisterEpilogueMaxBlocks);
    if (registerBlocks > 0 && 2 * registerBlocks >= f.blocks) {
      // The register epilogue, as with a separate c.
    } else if (f.blocksUpTo8 > 0 && 2 * f.blocksUpTo8 >= f.blocks) {
      chosen.epilogue = Epilogue::Reduction;
      chosen.redMaxBlocks = kRedEpilogueTileBlocks;
    } else if (f.registerOverPark) {
      // The register epilogue again.
    } else {
      chosen.epilogue = Epilogue::InPlace;
    }
  }
}

/// Pairs of CTAs on neighbouring m-blocks share the B tile by TMA
/// multicast, halving its L2 reads. Only with an even m-block count (an
/// odd one leaves the last pair's second CTA computing a tile past M), and
/// only for wide outputs: on the H200 it gained 3-11% at N = 7168 and
/// nothing (or lost) at N = 2048 (bench/NOTES.md). Not for the in-place
/// kernel, which measured 0-2.5% faster without it at N = 7168 (section 9).
static void pairForMulticast(KernelConfig &chosen,
                             const KGroupedProblem &problem,
                             const Target &target) {
  int64_t mBlocks = ceilDiv(problem.m, chosen.blockM);
  KernelConfig paired = chosen;
  paired.clusterM = 2;
  if (!isInPlaceKernel(chosen.epilogue) && mBlocks % 2 == 0 &&
      problem.n >= kMulticastMinN && checkConfig(paired, target).empty())
    chosen = paired;
}

/// Parked tiles: the math warpgroups hand each tile's sums to the
/// producer warpgroup's spare warps through shared memory and go on to the
/// next tile, so the in-place epilogue overlaps the next tile's block loop.
/// On the H200 the 128-column parked kernel (4 stages) was 3-8% faster
/// than the 192-column in-place kernel with mean K per group of 2048 and
/// 4096, and 1.5% slower to 1% faster at 8192 (bench/NOTES.md sections 15
/// and 16); the parked 192-column kernel (3 stages) was slower than it on
/// every such shape. Short groups make the epilogue a larger share of each
/// tile. The overlap needs a next tile: at least two per SM.
static void parkInPlaceTiles(KernelConfig &chosen,
                             const KGroupedProblem &problem,
                             const GroupFacts &f, const Target &target) {
  if (chosen.epilogue == Epilogue::InPlace && chosen.blockM == 128) {
    KernelConfig parked = chosen;
    parked.blockN = 128;
    parked.epilogue = Epilogue::Parked;
    parked.stages = maxParkedStages(parked.blockM, parked.blockN, target);
    int64_t tiles = satMul(ceilDiv(problem.m, parked.blockM) *
                               ceilDiv(problem.n, parked.blockN),
                           f.numGroups);
    if (f.numGroups > 0 && f.blocks <= kParkMaxMeanBlocks * f.numGroups &&
        tiles >= 2 * static_cast<int64_t>(target.numSMs) &&
        parkFits(parked, target) && checkConfig(parked, target).empty())
      chosen = parked;
  }
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

  KernelConfig chosen = chooseByMakespan(problem, candidates, target);
  const GroupFacts facts = groupFactsOf(problem, target);
  narrowForShortGroups(chosen, candidates, problem, facts);
  chooseInPlaceEpilogue(chosen, problem, facts);
  pairForMulticast(chosen, problem, target);
  parkInPlaceTiles(chosen, problem, facts, target);
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
