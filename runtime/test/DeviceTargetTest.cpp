//===- DeviceTargetTest.cpp - The heuristics' target of a device ----------===//

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/KGroupedGemm.h"

#include <gtest/gtest.h>

using namespace dgemm::runtime;
using dgemm::heuristics::Calibration;
using dgemm::heuristics::calibrationFor;

namespace {

DeviceInfo device(int memoryClockKHz, int busWidthBits) {
  DeviceInfo info;
  info.smCount = 132;
  info.maxSmemOptin = 232448;
  info.ccMajor = 9;
  info.memoryClockKHz = memoryClockKHz;
  info.memoryBusWidthBits = busWidthBits;
  return info;
}

TEST(DeviceTarget, BandwidthIsTwoTransfersPerClockOverTheBus) {
  // What the H100 SXM's driver reports (2619 MHz, 5120 bits): 3352 GB/s, the
  // figure the runtime printed on the GPU machine.
  EXPECT_EQ(peakMemoryBandwidthGBps(device(2619000, 5120)), 3352);
  // The H200's memory clock (3201 MHz, as nvidia-smi reported it there) on a
  // 6144-bit bus (six HBM3e stacks): 4917 GB/s.
  EXPECT_EQ(peakMemoryBandwidthGBps(device(3201000, 6144)), 4917);
  // Unknown where the driver reports either as 0.
  EXPECT_EQ(peakMemoryBandwidthGBps(device(0, 5120)), 0);
  EXPECT_EQ(peakMemoryBandwidthGBps(device(2619000, 0)), 0);
  EXPECT_EQ(peakMemoryBandwidthGBps(device(-1, -1)), 0);
}

TEST(DeviceTarget, CarriesTheDeviceAndSelectsItsCalibration) {
  dgemm::heuristics::Target h100 = targetFor(device(2619000, 5120));
  EXPECT_EQ(h100.numSMs, 132);
  EXPECT_EQ(h100.maxSmemPerBlock, 232448);
  EXPECT_EQ(h100.memoryBandwidthGBps, 3352);
  EXPECT_EQ(calibrationFor(h100), Calibration::H100);
  EXPECT_EQ(calibrationFor(targetFor(device(3201000, 6144))),
            Calibration::H200);
  EXPECT_EQ(calibrationFor(targetFor(device(0, 0))), Calibration::H100);
}

} // namespace
