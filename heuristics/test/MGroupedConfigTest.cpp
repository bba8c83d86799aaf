//===- MGroupedConfigTest.cpp - The 1D2D kinds' configurations ------------===//

#include "dgemm/Heuristics/MGroupedConfig.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

using namespace dgemm::heuristics;

namespace {

Target h100() {
  Target t;
  t.numSMs = 132;
  return t;
}

TEST(MGroupedConfigTest, EntryNamesSayTheKind) {
  Target t = h100();
  EXPECT_EQ(makeMGroupedConfig(128, 128, t).entryName(),
            "dgemm_mgrouped_fp8_1d2d_bm128_bn128_s6");
  EXPECT_EQ(makeMGroupedConfig(128, 64, t, Kind::MGroupedMasked).entryName(),
            "dgemm_mgrouped_masked_fp8_1d2d_bm128_bn64_s8");
  KernelConfig normal = makeMGroupedConfig(64, 32, t, Kind::Normal);
  normal.unsafe = unsigned(Unsafe::SkipProxyFence);
  EXPECT_EQ(normal.entryName(),
            "dgemm_normal_fp8_1d2d_bm64_bn32_s8_unsafe_nofence");
}

TEST(MGroupedConfigTest, EveryOneDTwoDKindIsChecked) {
  Target t = h100();
  for (Kind kind :
       {Kind::MGroupedContiguous, Kind::MGroupedMasked, Kind::Normal}) {
    EXPECT_TRUE(isOneDTwoDKind(kind));
    KernelConfig c = makeMGroupedConfig(128, 128, t, kind);
    EXPECT_EQ(checkConfig(c, t), "") << kindName(kind);
    c.descSlots = 2;
    EXPECT_NE(
        checkConfig(c, t).find("desc_slots must be 0 for the 1D2D kernels"),
        std::string::npos)
        << checkConfig(c, t);
  }
  EXPECT_FALSE(isOneDTwoDKind(Kind::KGroupedContiguous));
  KernelConfig bad = makeMGroupedConfig(128, 128, t);
  bad.kind = Kind(7);
  EXPECT_NE(checkConfig(bad, t).find("kind must be"), std::string::npos);
}

TEST(MGroupedConfigTest, MaskedCountsEveryGroupsTiles) {
  MGroupedProblem masked{128, 4096, 7168, 8, Kind::MGroupedMasked};
  MGroupedProblem contiguous{128, 4096, 7168, 8, Kind::MGroupedContiguous};
  EXPECT_EQ(modelledTiles(masked, 128), 8 * 32);
  EXPECT_EQ(modelledTiles(contiguous, 128), 32);
  // One wave either way for one group of 128 rows: 64 columns are cheaper;
  // eight groups make the 64-column kernel take four waves against two.
  Target t = h100();
  MGroupedProblem one = masked;
  one.numGroups = 1;
  EXPECT_EQ(selectMGroupedConfig(one, t).blockN, 64);
  EXPECT_EQ(selectMGroupedConfig(masked, t).blockN, 128);
  EXPECT_EQ(selectMGroupedConfig(masked, t).kind, Kind::MGroupedMasked);
  MGroupedProblem dense{4096, 7168, 7168, 1, Kind::Normal};
  KernelConfig c = selectMGroupedConfig(dense, t);
  EXPECT_EQ(c.kind, Kind::Normal);
  EXPECT_EQ(c.blockN, 128);
}

TEST(MGroupedConfigTest, CandidatesPerKindAreDistinct) {
  Target t = h100();
  std::set<std::string> names;
  for (Kind kind :
       {Kind::MGroupedContiguous, Kind::MGroupedMasked, Kind::Normal}) {
    std::vector<KernelConfig> cs = candidateMGroupedConfigs(t, kind);
    EXPECT_EQ(cs.size(), 8u) << kindName(kind);
    for (const KernelConfig &c : cs) {
      EXPECT_EQ(c.kind, kind);
      names.insert(c.entryName());
    }
  }
  EXPECT_EQ(names.size(), 24u);
}

TEST(MGroupedConfigTest, OverridesKeepTheKind) {
  Target t = h100();
  KernelConfig c = makeMGroupedConfig(128, 128, t, Kind::MGroupedMasked);
  ConfigOverrides o;
  o.blockN = 32;
  o.blockM = 64;
  EXPECT_EQ(applyOverrides(c, o, t, nullptr), "");
  EXPECT_EQ(c.kind, Kind::MGroupedMasked);
  EXPECT_EQ(c.blockM, 64);
  EXPECT_EQ(c.blockN, 32);
  EXPECT_EQ(c.mathWarpgroups, 1);
}

} // namespace
