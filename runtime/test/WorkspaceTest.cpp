//===- WorkspaceTest.cpp - Grid and workspace sizes -----------------------===//

#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/Overrides.h"
#include "dgemm/Runtime/Validation.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace dgemm::runtime;
using dgemm::heuristics::Epilogue;
using dgemm::heuristics::isInPlaceKernel;
using dgemm::heuristics::KernelConfig;
using dgemm::heuristics::Target;

namespace {

KernelConfig tile(int blockM, int blockN) {
  KernelConfig config;
  config.blockM = blockM;
  config.blockN = blockN;
  config.numSMs = 132;
  return config;
}

TEST(WorkspaceTest, BytesPerCtaAreTwoMapsPerSlot) {
  EXPECT_EQ(workspaceBytesFor(132, 2), 132u * 2 * 2 * 128);
  EXPECT_EQ(workspaceBytesFor(1, 1), 256u);
}

TEST(WorkspaceTest, TilesCountPartialBlocks) {
  EXPECT_EQ(numOutputTiles(2048, 2048, 4, tile(128, 128)), 4 * 16 * 16);
  EXPECT_EQ(numOutputTiles(388, 260, 3, tile(128, 192)), 3 * 4 * 2);
}

TEST(WorkspaceTest, GridIsCappedBySmsAndTiles) {
  EXPECT_EQ(gridSizeFor(2048, 2048, 4, tile(128, 128), 132), 132);
  EXPECT_EQ(gridSizeFor(2048, 2048, 4, tile(128, 128), 114), 114);
  EXPECT_EQ(gridSizeFor(256, 256, 1, tile(128, 128), 132), 4);
  KernelConfig fewer = tile(128, 128);
  fewer.numSMs = 100;
  EXPECT_EQ(gridSizeFor(2048, 2048, 4, fewer, 132), 100);
}

TEST(WorkspaceTest, GridIsWholeClusters) {
  KernelConfig pair = tile(128, 128);
  pair.clusterM = 2;
  EXPECT_EQ(gridSizeFor(2048, 2048, 4, pair, 131), 130);
  EXPECT_EQ(gridSizeFor(128, 384, 1, pair, 132), 2);
  // Fewer tiles than one cluster still launches one cluster.
  EXPECT_EQ(gridSizeFor(128, 128, 1, pair, 132), 2);
}

TEST(WorkspaceTest, MatchesSelectedConfig) {
  std::vector<int32_t> ks = {256, 128, 128, 256};
  Target target;
  KernelConfig config = dgemm::heuristics::selectKGroupedConfig(
      makeProblem(2048, 2048, 4, ks.data()), target);
  uint64_t expected = workspaceBytesFor(
      gridSizeFor(2048, 2048, 4, config, target.numSMs), config.descSlots);
  EXPECT_EQ(kGroupedWorkspaceBytesFor(2048, 2048, 4, ks.data(), target),
            expected);
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(expected % 128, 0u);
}

TEST(WorkspaceTest, SmallProblemNeedsLess) {
  std::vector<int32_t> ks = {128};
  uint64_t small = kGroupedWorkspaceBytesFor(128, 128, 1, ks.data(), Target());
  std::vector<int32_t> many(8, 1024);
  uint64_t big =
      kGroupedWorkspaceBytesFor(4096, 4096, 8, many.data(), Target());
  EXPECT_LT(small, big);
  EXPECT_LE(big, workspaceBytesFor(132, 2));
}

TEST(WorkspaceTest, InvalidSizesGiveZero) {
  std::vector<int32_t> ks = {128};
  EXPECT_EQ(kGroupedWorkspaceBytesFor(0, 128, 1, ks.data(), Target()), 0u);
  EXPECT_EQ(kGroupedWorkspaceBytesFor(128, 128, 0, ks.data(), Target()), 0u);
  EXPECT_EQ(kGroupedWorkspaceBytesFor(128, 128, 1, nullptr, Target()), 0u);
  EXPECT_EQ(dgemm_k_grouped_workspace_bytes(128, -4, 1, ks.data()), 0u);
}

TEST(WorkspaceTest, PublicQueryRejectsWhatNoCallCouldLaunch) {
  // kGroupedWorkspaceBytes checks the sizes before the heuristics see them:
  // K negative or not a multiple of 128, a total K beyond int32, extents
  // beyond the kernel's 32-bit parameters.
  std::vector<int32_t> negative = {256, -128};
  std::vector<int32_t> unaligned = {256, 64};
  std::vector<int32_t> huge = {2147483520, 2147483520};
  EXPECT_EQ(kGroupedWorkspaceBytes(256, 256, 2, negative.data()), 0u);
  EXPECT_EQ(kGroupedWorkspaceBytes(256, 256, 2, unaligned.data()), 0u);
  EXPECT_EQ(kGroupedWorkspaceBytes(256, 256, 2, huge.data()), 0u);
  EXPECT_EQ(kGroupedWorkspaceBytes(int64_t(1) << 31, 256, 1, huge.data()), 0u);
  EXPECT_EQ(kGroupedWorkspaceBytes(256, int64_t(1) << 62, 1, huge.data()), 0u);
  EXPECT_GT(kGroupedWorkspaceBytes(256, 256, 1, huge.data()), 0u);
}

TEST(WorkspaceTest, SizeChecksNameTheArgument) {
  std::vector<int32_t> ks = {128, 256};
  EXPECT_TRUE(checkKGroupedSizes(2147483647, 1024, 2, ks.data()).ok());
  struct Case {
    int64_t m, n, groups;
    std::vector<int32_t> ks;
    const char *expected;
  } cases[] = {
      {0, 128, 1, {128}, "argument 'm' must be in [1, 2147483647]"},
      {int64_t(1) << 31, 128, 1, {128}, "argument 'm' must be in"},
      {128, -1, 1, {128}, "argument 'n' must be in"},
      {128, 128, 0, {128}, "argument 'num_groups' must be in"},
      {128, 128, 2, {128, -128}, "got -128 for group 1"},
      {128, 128, 2, {2147483520, 256}, "sum(ks) must be <= 2147483647"},
  };
  for (const Case &c : cases) {
    Status s = checkKGroupedSizes(c.m, c.n, c.groups, c.ks.data());
    EXPECT_EQ(s.code(), ErrorCode::InvalidArgument) << c.expected;
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
  }
  EXPECT_NE(checkKGroupedSizes(128, 128, 1, nullptr)
                .message()
                .find("argument 'ks' must not be null"),
            std::string::npos);
}

TEST(WorkspaceTest, PublicQueryCoversTheLaunch) {
  // Without a driver the public query uses Target's defaults; with one it
  // uses the current device. Either way it is a whole number of 256-byte
  // slot pairs and covers at least one CTA.
  std::vector<int32_t> ks = {256, 128, 128, 256};
  uint64_t bytes = dgemm_k_grouped_workspace_bytes(2048, 2048, 4, ks.data());
  EXPECT_GE(bytes, 256u);
  EXPECT_EQ(bytes % 256, 0u);
  EXPECT_EQ(bytes, kGroupedWorkspaceBytes(2048, 2048, 4, ks.data()));
}

} // namespace

namespace {

/// Sets `name` to the malformed `value` and expects the configuration of a
/// call to be refused naming the variable (a malformed override is an error
/// of every call, not ignored); unsets it again.
void expectMalformed(const char *name, const char *value, int64_t m, int64_t n,
                     const std::vector<int32_t> &ks, bool inPlace = false) {
  ::setenv(name, value, 1);
  reloadEnvOverridesForTesting();
  KernelConfig config;
  Status s = chooseKGroupedConfig(m, n, int(ks.size()), ks.data(), Target(),
                                  inPlace, config);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument) << name << "=" << value;
  EXPECT_NE(s.message().find(name), std::string::npos) << s.message();
  ::unsetenv(name);
  reloadEnvOverridesForTesting();
}

TEST(WorkspaceTest, DescSlotsOverrideFromEnvironment) {
  const std::vector<int32_t> ks = {256, 128, 128, 256};
  Target target;
  ::unsetenv("DGEMM_DESC_SLOTS");
  reloadEnvOverridesForTesting();
  KernelConfig chosen = chooseKGroupedConfig(2048, 2048, 4, ks.data(), target);
  EXPECT_EQ(chosen.descSlots, 2);
  ::setenv("DGEMM_DESC_SLOTS", "1", 1);
  reloadEnvOverridesForTesting();
  KernelConfig single = chooseKGroupedConfig(2048, 2048, 4, ks.data(), target);
  EXPECT_EQ(single.descSlots, 1);
  EXPECT_EQ(single.blockN, chosen.blockN);
  uint64_t singleBytes =
      kGroupedWorkspaceBytesFor(2048, 2048, 4, ks.data(), target);
  ::unsetenv("DGEMM_DESC_SLOTS");
  reloadEnvOverridesForTesting();
  EXPECT_EQ(singleBytes * 2,
            kGroupedWorkspaceBytesFor(2048, 2048, 4, ks.data(), target));
  // Anything but 1 or 2 is an error.
  expectMalformed("DGEMM_DESC_SLOTS", "7", 2048, 2048, ks);
}

TEST(WorkspaceTest, ParkOverridesFromEnvironment) {
  // 16 groups of 2048 in place: the heuristics park the 128-column tiles.
  const std::vector<int32_t> ks(16, 2048);
  Target target;
  for (const char *name :
       {"DGEMM_PARK", "DGEMM_STAGES", "DGEMM_BLOCK_N", "DGEMM_BLOCK_M",
        "DGEMM_IN_PLACE_ONLY", "DGEMM_RED_MAX_BLOCKS", "DGEMM_CLUSTER_M"})
    ::unsetenv(name);
  reloadEnvOverridesForTesting();
  auto choose = [&](const std::vector<int32_t> &k, bool inPlace = true) {
    return chooseKGroupedConfig(4096, 7168, int(k.size()), k.data(), target,
                                inPlace);
  };
  KernelConfig parked = choose(ks);
  EXPECT_EQ(parked.entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s4_r2_ip_park");
  // DGEMM_PARK=0: the in-place kernel of the same tile, with the stages
  // that fit without the park.
  ::setenv("DGEMM_PARK", "0", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_ip");
  // DGEMM_STAGES applies to the kernel the override leaves.
  ::setenv("DGEMM_STAGES", "3", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s3_r2_ip");
  ::setenv("DGEMM_PARK", "1", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s3_r2_ip_park");
  ::unsetenv("DGEMM_STAGES");
  reloadEnvOverridesForTesting();
  // DGEMM_PARK=1 parks the 4-group call's 192-column tiles (3 stages fit).
  const std::vector<int32_t> long4(4, 8192);
  EXPECT_EQ(choose(long4).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s3_r2_ip_park");
  // ... but not where the tile cannot park (144 columns), nor out of place.
  ::setenv("DGEMM_BLOCK_N", "144", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(long4).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn144_s6_r2_ip");
  ::unsetenv("DGEMM_BLOCK_N");
  reloadEnvOverridesForTesting();
  EXPECT_NE(choose(long4, /*inPlace=*/false).epilogue, Epilogue::Parked);
  // Other values are an error.
  expectMalformed("DGEMM_PARK", "yes", 4096, 7168, ks, true);
  // Overrides of the tile clear the park where it cannot stay: 144 columns,
  // 192 rows (three math warpgroups), or another epilogue.
  ::setenv("DGEMM_BLOCK_N", "144", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn144_s6_r2_ip");
  ::setenv("DGEMM_BLOCK_N", "192", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s3_r2_ip_park");
  ::unsetenv("DGEMM_BLOCK_N");
  reloadEnvOverridesForTesting();
  ::setenv("DGEMM_BLOCK_M", "192", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm192_bn128_s5_r2_ip");
  ::unsetenv("DGEMM_BLOCK_M");
  reloadEnvOverridesForTesting();
  ::setenv("DGEMM_IN_PLACE_ONLY", "0", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q");
  ::unsetenv("DGEMM_IN_PLACE_ONLY");
  reloadEnvOverridesForTesting();
  ::setenv("DGEMM_RED_MAX_BLOCKS", "8", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose(ks).entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_red8_q");
  ::unsetenv("DGEMM_RED_MAX_BLOCKS");
  reloadEnvOverridesForTesting();
  // CTA pairs: the paired in-place kernel, which a cluster-m=2 bundle holds.
  ::setenv("DGEMM_CLUSTER_M", "2", 1);
  reloadEnvOverridesForTesting();
  KernelConfig paired = choose(ks);
  EXPECT_EQ(paired.entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_ip");
  EXPECT_EQ(dgemm::heuristics::checkConfig(paired, target), "");
  ::unsetenv("DGEMM_CLUSTER_M");
  reloadEnvOverridesForTesting();
}

TEST(WorkspaceTest, InPlaceOnlyOverrideDropsTheHeuristicsPair) {
  // 16 groups of 512 into 4096 x 4096 in place: 32 m-blocks and N >= 4096,
  // so the heuristics pair the CTAs of their (not in-place) kernel.
  const std::vector<int32_t> ks(16, 512);
  Target target;
  for (const char *name : {"DGEMM_IN_PLACE_ONLY", "DGEMM_CLUSTER_M",
                           "DGEMM_RED_MAX_BLOCKS", "DGEMM_STAGES"})
    ::unsetenv(name);
  reloadEnvOverridesForTesting();
  auto choose = [&] {
    return chooseKGroupedConfig(4096, 4096, int(ks.size()), ks.data(), target,
                                /*inPlace=*/true);
  };
  ASSERT_EQ(choose().clusterM, 2);
  // The in-place kernel is never paired by the heuristics, and so absent
  // from a default bundle: the override leaves it unpaired ...
  ::setenv("DGEMM_IN_PLACE_ONLY", "1", 1);
  reloadEnvOverridesForTesting();
  KernelConfig inPlace = choose();
  EXPECT_TRUE(isInPlaceKernel(inPlace.epilogue));
  EXPECT_EQ(inPlace.clusterM, 1);
  EXPECT_EQ(dgemm::heuristics::checkConfig(inPlace, target), "");
  // ... unless pairs were asked for too (a cluster-m=2 bundle holds them).
  ::setenv("DGEMM_CLUSTER_M", "2", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(choose().clusterM, 2);
  EXPECT_TRUE(isInPlaceKernel(choose().epilogue));
  ::unsetenv("DGEMM_CLUSTER_M");
  reloadEnvOverridesForTesting();
  ::unsetenv("DGEMM_IN_PLACE_ONLY");
  reloadEnvOverridesForTesting();
}

TEST(WorkspaceTest, ClusterOverrideFromEnvironment) {
  // 4096 x 7168: 32 m-blocks and a wide N, so the heuristics pair CTAs.
  const std::vector<int32_t> ks = {1024, 1024};
  Target target;
  ::unsetenv("DGEMM_CLUSTER_M");
  reloadEnvOverridesForTesting();
  KernelConfig chosen = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  EXPECT_EQ(chosen.clusterM, 2);
  ::setenv("DGEMM_CLUSTER_M", "1", 1);
  reloadEnvOverridesForTesting();
  KernelConfig single = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  EXPECT_EQ(single.clusterM, 1);
  EXPECT_EQ(single.blockN, chosen.blockN);
  ::setenv("DGEMM_CLUSTER_M", "2", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(2048, 2048, 2, ks.data(), target).clusterM, 2);
  ::unsetenv("DGEMM_CLUSTER_M");
  reloadEnvOverridesForTesting();
  expectMalformed("DGEMM_CLUSTER_M", "3", 4096, 7168, ks);
}

TEST(WorkspaceTest, BlockNOverrideFromEnvironment) {
  const std::vector<int32_t> ks = {1024, 1024};
  Target target;
  ::unsetenv("DGEMM_BLOCK_N");
  reloadEnvOverridesForTesting();
  KernelConfig chosen = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  ::setenv("DGEMM_BLOCK_N", "144", 1);
  reloadEnvOverridesForTesting();
  KernelConfig forced = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  EXPECT_EQ(forced.blockN, 144);
  EXPECT_EQ(forced.blockM, chosen.blockM);
  EXPECT_EQ(forced.clusterM, chosen.clusterM);
  // The most stages that fit the narrower tile.
  EXPECT_EQ(forced.stages,
            dgemm::heuristics::maxStages(forced.blockM, 144, target));
  EXPECT_TRUE(dgemm::heuristics::checkConfig(forced, target).empty());
  ::unsetenv("DGEMM_BLOCK_N");
  reloadEnvOverridesForTesting();
  // A width out of the rule's range (wider than any kernel's WGMMA), or not
  // a number: an error.
  expectMalformed("DGEMM_BLOCK_N", "264", 4096, 7168, ks);
  expectMalformed("DGEMM_BLOCK_N", "wide", 4096, 7168, ks);
}

TEST(WorkspaceTest, BlockMOverrideFromEnvironment) {
  const std::vector<int32_t> ks = {4096, 4096};
  Target target;
  ::unsetenv("DGEMM_BLOCK_M");
  reloadEnvOverridesForTesting();
  ::unsetenv("DGEMM_BLOCK_N");
  reloadEnvOverridesForTesting();
  KernelConfig chosen = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  ASSERT_EQ(chosen.blockM, 128);
  ASSERT_GT(chosen.blockN, 128);
  // 192 rows need at most 128 columns: alone it is ignored here.
  ::setenv("DGEMM_BLOCK_M", "192", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(4096, 7168, 2, ks.data(), target), chosen);
  // With the width forced too: three math warpgroups, no multicast pairs,
  // the most stages that fit.
  ::setenv("DGEMM_BLOCK_N", "128", 1);
  reloadEnvOverridesForTesting();
  KernelConfig forced = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  EXPECT_EQ(forced.blockM, 192);
  EXPECT_EQ(forced.blockN, 128);
  EXPECT_EQ(forced.mathWarpgroups, 3);
  EXPECT_EQ(forced.clusterM, 1);
  EXPECT_EQ(forced.stages, dgemm::heuristics::maxStages(192, 128, target));
  EXPECT_TRUE(dgemm::heuristics::checkConfig(forced, target).empty());
  // 64 rows: one math warpgroup.
  ::setenv("DGEMM_BLOCK_M", "64", 1);
  reloadEnvOverridesForTesting();
  forced = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  EXPECT_EQ(forced.blockM, 64);
  EXPECT_EQ(forced.mathWarpgroups, 1);
  // Other heights, or not a number: an error; empty is unset.
  ::unsetenv("DGEMM_BLOCK_N");
  reloadEnvOverridesForTesting();
  for (const char *bad : {"96", "256", "0", "tall"})
    expectMalformed("DGEMM_BLOCK_M", bad, 4096, 7168, ks);
  ::setenv("DGEMM_BLOCK_M", "", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(4096, 7168, 2, ks.data(), target), chosen);
  ::unsetenv("DGEMM_BLOCK_M");
  reloadEnvOverridesForTesting();
}

TEST(WorkspaceTest, StagesOverrideFromEnvironment) {
  const std::vector<int32_t> ks = {1024, 1024};
  Target target;
  ::unsetenv("DGEMM_STAGES");
  reloadEnvOverridesForTesting();
  KernelConfig chosen = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  ASSERT_GT(chosen.stages, 3);
  ::setenv("DGEMM_STAGES", "3", 1);
  reloadEnvOverridesForTesting();
  KernelConfig forced = chooseKGroupedConfig(4096, 7168, 2, ks.data(), target);
  EXPECT_EQ(forced.stages, 3);
  EXPECT_EQ(forced.blockN, chosen.blockN);
  EXPECT_EQ(forced.clusterM, chosen.clusterM);
  // Fewer than two, or not a number: an error; empty is unset.
  for (const char *bad : {"1", "0", "-4", "3x"})
    expectMalformed("DGEMM_STAGES", bad, 4096, 7168, ks);
  ::setenv("DGEMM_STAGES", "", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(4096, 7168, 2, ks.data(), target), chosen);
  // More stages than fit: ignored.
  ::setenv("DGEMM_STAGES", std::to_string(chosen.stages + 1).c_str(), 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(4096, 7168, 2, ks.data(), target), chosen);
  ::unsetenv("DGEMM_STAGES");
  reloadEnvOverridesForTesting();
}

TEST(WorkspaceTest, ReductionEpilogueInPlaceOnly) {
  // Groups of 7 and 8 K blocks: too long for the register epilogue in
  // place, short enough for the reductions.
  const std::vector<int32_t> ks = {1024, 896, 1024, 1024};
  Target target;
  ::unsetenv("DGEMM_RED_MAX_BLOCKS");
  reloadEnvOverridesForTesting();
  KernelConfig separate =
      chooseKGroupedConfig(2048, 2048, 4, ks.data(), target);
  KernelConfig inPlace =
      chooseKGroupedConfig(2048, 2048, 4, ks.data(), target, true);
  EXPECT_EQ(separate.redMaxBlocks, 0);
  EXPECT_EQ(inPlace.redMaxBlocks, 8);
  // Same tile and grid, so the same workspace.
  KernelConfig tile = inPlace;
  tile.redMaxBlocks = 0;
  tile.epilogue = Epilogue::Register;
  EXPECT_EQ(tile, separate);

  // DGEMM_RED_MAX_BLOCKS replaces the bound in place only.
  ::setenv("DGEMM_RED_MAX_BLOCKS", "0", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(2048, 2048, 4, ks.data(), target, true),
            separate);
  ::setenv("DGEMM_RED_MAX_BLOCKS", "16", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(
      chooseKGroupedConfig(2048, 2048, 4, ks.data(), target, true).redMaxBlocks,
      16);
  EXPECT_EQ(chooseKGroupedConfig(2048, 2048, 4, ks.data(), target), separate);
  // Anything else is an error; empty is unset.
  for (const char *bad : {"-1", "many", "8x"})
    expectMalformed("DGEMM_RED_MAX_BLOCKS", bad, 2048, 2048, ks, true);
  ::setenv("DGEMM_RED_MAX_BLOCKS", "", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(2048, 2048, 4, ks.data(), target, true),
            inPlace);
  ::unsetenv("DGEMM_RED_MAX_BLOCKS");
  reloadEnvOverridesForTesting();
}

TEST(WorkspaceTest, InPlaceKernelOverride) {
  // Long groups: an in-place call takes the in-place kernel.
  const std::vector<int32_t> ks = {8192, 8192, 8192, 8192};
  Target target;
  ::unsetenv("DGEMM_RED_MAX_BLOCKS");
  reloadEnvOverridesForTesting();
  ::unsetenv("DGEMM_IN_PLACE_ONLY");
  reloadEnvOverridesForTesting();
  KernelConfig inPlace =
      chooseKGroupedConfig(7168, 2048, 4, ks.data(), target, true);
  KernelConfig separate =
      chooseKGroupedConfig(7168, 2048, 4, ks.data(), target);
  EXPECT_TRUE(isInPlaceKernel(inPlace.epilogue));
  EXPECT_FALSE(isInPlaceKernel(separate.epilogue));
  KernelConfig tile = inPlace;
  tile.epilogue = Epilogue::Register;
  tile.quadB = 1; // quad-ordered B for every kernel but the in-place one
  EXPECT_EQ(tile, separate);
  // DGEMM_IN_PLACE_ONLY sets the field in place only; 1 clears the bound of
  // the reduction kernel, and DGEMM_RED_MAX_BLOCKS clears the field.
  ::setenv("DGEMM_IN_PLACE_ONLY", "0", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(7168, 2048, 4, ks.data(), target, true),
            separate);
  EXPECT_EQ(separate.quadB, 1);
  ::setenv("DGEMM_IN_PLACE_ONLY", "1", 1);
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chooseKGroupedConfig(7168, 2048, 4, ks.data(), target), separate);
  const std::vector<int32_t> seedKs = {256, 128, 128, 256};
  KernelConfig seed =
      chooseKGroupedConfig(2048, 2048, 4, seedKs.data(), target, true);
  EXPECT_TRUE(isInPlaceKernel(seed.epilogue));
  EXPECT_EQ(seed.redMaxBlocks, 0);
  ::unsetenv("DGEMM_IN_PLACE_ONLY");
  reloadEnvOverridesForTesting();
  expectMalformed("DGEMM_IN_PLACE_ONLY", "yes", 7168, 2048, ks, true);
  ::setenv("DGEMM_RED_MAX_BLOCKS", "8", 1);
  reloadEnvOverridesForTesting();
  KernelConfig reducing =
      chooseKGroupedConfig(7168, 2048, 4, ks.data(), target, true);
  EXPECT_EQ(reducing.epilogue, Epilogue::Reduction);
  EXPECT_EQ(reducing.redMaxBlocks, 8);
  ::unsetenv("DGEMM_RED_MAX_BLOCKS");
  reloadEnvOverridesForTesting();
}
} // namespace
