//===- KGroupedModel.h - What the k-grouped rule files share ----*- C++ -*-===//
//
// Kernel-layout facts and the per-group K runs that the k-grouped kernel's
// checks (KernelConfig.cpp), cost models (KGroupedSelect.cpp,
// InPlaceModel.cpp) and overrides (Overrides.cpp) all use.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_HEURISTICS_LIB_KGROUPEDMODEL_H
#define DGEMM_HEURISTICS_LIB_KGROUPEDMODEL_H

#include "Rules.h"
#include "dgemm/Heuristics/KernelConfig.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dgemm {
namespace heuristics {
namespace detail {

// Kernel-layout facts (docs/KernelABI.md).
constexpr int kBlockK = 128; // FP8 1D1D: one scale per 128 K
constexpr int kMaxBlockNForRegisters = 192;
// Upper bound of red_max_blocks: 2^20 K blocks (K = 2^27) exceeds any
// group's K, so larger bounds would select nothing more.
constexpr int kMaxRedMaxBlocks = 1 << 20;

// Assumed K per group when the problem gives neither ks nor an expectation.
constexpr int64_t kDefaultKPerGroup = 4096;

/// `count` consecutive groups with the same K.
struct GroupRun {
  int64_t k;
  int64_t count;
};

/// Per-group K as the model sees it: ks when given (one run per group, in
/// order), else one run of numGroups groups of the expectation, so that a
/// huge group count costs no memory. Sums over runs are exact within the
/// limits of checkProblem (at most 2^31 groups of 2^24 blocks).
inline std::vector<GroupRun> groupRuns(const KGroupedProblem &problem) {
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

inline std::vector<GroupRun> runsOf(const std::vector<int64_t> &ks) {
  std::vector<GroupRun> runs;
  runs.reserve(ks.size());
  for (int64_t k : ks)
    runs.push_back({std::max<int64_t>(k, 0), 1});
  return runs;
}

inline int64_t groupCount(const std::vector<GroupRun> &runs) {
  int64_t groups = 0;
  for (const GroupRun &run : runs)
    groups = satAdd(groups, run.count);
  return groups;
}

/// The 128-deep K blocks (each group's K rounded up) of the groups of at
/// most `maxBlocks` blocks.
inline int64_t blocksInGroupsUpTo(const std::vector<GroupRun> &runs,
                                  int64_t maxBlocks) {
  int64_t sum = 0;
  for (const GroupRun &run : runs)
    if (int64_t blocks = ceilDiv(run.k, kBlockK); blocks <= maxBlocks)
      sum = satAdd(sum, satMul(blocks, run.count));
  return sum;
}

// The in-place model over group runs (InPlaceModel.cpp), for the selection.

/// The modelled time (inPlaceTileTime) of the groups of at most `maxBlocks`
/// 128-deep K blocks: every group has the same tiles, so their times add up.
double inPlaceTimeUpTo(const std::vector<GroupRun> &ks, int64_t maxBlocks,
                       InPlaceEpilogue epilogue, Calibration calibration);

/// inPlaceTimeUpTo of every group.
double inPlaceTime(const std::vector<GroupRun> &ks, InPlaceEpilogue epilogue,
                   Calibration calibration);

/// registerBeatsPark, given the register epilogue's time of all of `ks`.
bool registerBeatsParkAt(const std::vector<GroupRun> &ks, double registerTime);

/// fastestInPlaceEpilogueH200 of group runs.
InPlaceEpilogue fastestEpilogueH200(const std::vector<GroupRun> &ks);

} // namespace detail
} // namespace heuristics
} // namespace dgemm

#endif // DGEMM_HEURISTICS_LIB_KGROUPEDMODEL_H
