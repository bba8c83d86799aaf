//===- InPlaceModel.cpp - The in-place epilogues' tile-time model ---------===//
//
// The calibrations, the measured tile-time curves of the in-place epilogues
// (inPlaceTileTime) and the choices made with them: the register epilogue
// against the park, and the H200's fastest of three. docs/Heuristics.md
// describes the curves; keep the two in step.
//
//===----------------------------------------------------------------------===//

#include "KGroupedModel.h"
#include "dgemm/Heuristics/KernelConfig.h"

#include <cstddef>
#include <utility>

using namespace dgemm::heuristics;
using namespace dgemm::heuristics::detail;

namespace {

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

} // namespace

Calibration dgemm::heuristics::calibrationFor(const Target &target) {
  return target.memoryBandwidthGBps >= kH200MinBandwidthGBps
             ? Calibration::H200
             : Calibration::H100;
}

const char *dgemm::heuristics::calibrationName(Calibration calibration) {
  return calibration == Calibration::H200 ? "H200" : "H100";
}

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
double detail::inPlaceTimeUpTo(const std::vector<GroupRun> &ks,
                               int64_t maxBlocks, InPlaceEpilogue epilogue,
                               Calibration calibration) {
  double time = 0;
  for (const GroupRun &run : ks)
    if (int64_t blocks = ceilDiv(run.k, kBlockK); blocks <= maxBlocks)
      time += static_cast<double>(run.count) *
              inPlaceTileTime(blocks, epilogue, calibration);
  return time;
}

double detail::inPlaceTime(const std::vector<GroupRun> &ks,
                           InPlaceEpilogue epilogue, Calibration calibration) {
  return inPlaceTimeUpTo(ks, kInt64Max, epilogue, calibration);
}

/// registerBeatsPark, given the register epilogue's time of all of `ks`.
bool detail::registerBeatsParkAt(const std::vector<GroupRun> &ks,
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

InPlaceEpilogue detail::fastestEpilogueH200(const std::vector<GroupRun> &ks) {
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
