//===- KernelConfigTest.cpp - Tests for the k-grouped config heuristics ---===//

#include "dgemm/Heuristics/KernelConfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <ostream>
#include <set>
#include <tuple>
#include <utility>

using namespace dgemm::heuristics;

namespace dgemm::heuristics {
// Readable failures of EXPECT_EQ on these types.
void PrintTo(Epilogue e, std::ostream *os) { *os << epilogueName(e); }
void PrintTo(const KernelConfig &c, std::ostream *os) { *os << c.entryName(); }
} // namespace dgemm::heuristics

namespace {

/// A valid config to break one field of at a time.
KernelConfig validConfig() {
  KernelConfig c;
  c.blockM = 128;
  c.blockN = 128;
  c.stages = 6;
  c.descSlots = 2;
  c.mathWarpgroups = 2;
  return c;
}

KGroupedProblem uniformProblem(int numGroups, int64_t m, int64_t n,
                               int64_t kPerGroup) {
  KGroupedProblem p;
  p.m = m;
  p.n = n;
  p.numGroups = numGroups;
  p.expectedKPerGroup = kPerGroup;
  return p;
}

/// Whether `c` is one of the in-place kernels (c must be d), as an int.
int inPlaceKernel(const KernelConfig &c) {
  return isInPlaceKernel(c.epilogue) ? 1 : 0;
}

/// Whether `c` parks its tiles, as an int.
int parked(const KernelConfig &c) {
  return c.epilogue == Epilogue::Parked ? 1 : 0;
}

/// The rejection message for `c`, which must name `field`.
void expectRejected(const KernelConfig &c, const std::string &field) {
  std::string message = checkConfig(c, Target());
  EXPECT_NE(message, "") << "expected a violation of " << field;
  EXPECT_NE(message.find(field), std::string::npos)
      << "message does not name " << field << ": " << message;
}

//===----------------------------------------------------------------------===//
// Shared memory and stages
//===----------------------------------------------------------------------===//

TEST(SmemBytesFor, MatchesTheLayoutFormula) {
  // Pipeline: 1024 + align1024(s * ((bm + bn) * 128 + align128(bm * 4) +
  // align128(bn * 4)) + 16s); nothing after it (the TMA reduce-add
  // epilogue's buffers are retired).
  EXPECT_EQ(pipelineSmemBytesFor(128, 128, 6),
            1024 + 203776); // 6 * 33808 = 202848 -> 203776
  EXPECT_EQ(pipelineSmemBytesFor(128, 192, 5), 212992);
  EXPECT_EQ(pipelineSmemBytesFor(64, 64, 8), 137216);
  EXPECT_EQ(pipelineSmemBytesFor(64, 64, 0), 1024);
}

TEST(SmemBytesFor, UnparkedKernelsTakeThePipelineOnly) {
  for (Epilogue e :
       {Epilogue::Register, Epilogue::Reduction, Epilogue::InPlace}) {
    KernelConfig c = validConfig();
    c.epilogue = e;
    c.redMaxBlocks = e == Epilogue::Reduction ? 8 : 0;
    EXPECT_EQ(c.smemBytes(), pipelineSmemBytesFor(128, 128, 6))
        << epilogueName(e);
  }
}

TEST(SmemBytesFor, SaturatesInsteadOfOverflowing) {
  // 2^31 - 1 stages of 192 x 192: far past 2^31 bytes, but no overflow.
  EXPECT_GT(pipelineSmemBytesFor(192, 192, 2147483647), int64_t(2147483647));
  EXPECT_EQ(pipelineSmemBytesFor(2147483647, 2147483647, 2147483647),
            std::numeric_limits<int64_t>::max());
  KernelConfig c = validConfig();
  c.stages = 2147483647;
  EXPECT_EQ(c.smemBytes(), 2147483647); // saturated into an int
  EXPECT_NE(checkConfig(c, Target()).find("smem_bytes"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Shared-memory layout
//===----------------------------------------------------------------------===//

TEST(SmemLayout, OffsetsOfAPipeline) {
  KernelConfig c = validConfig(); // 128 x 128, 6 stages
  SmemLayout l = smemLayoutFor(c);
  EXPECT_EQ(l.stages, 6);
  EXPECT_EQ(l.aBytes, 128 * 128);
  EXPECT_EQ(l.bBytes, 128 * 128);
  EXPECT_EQ(l.sfaBytes, 512);
  EXPECT_EQ(l.sfbBytes, 512);
  EXPECT_EQ(l.aBase, 0);
  EXPECT_EQ(l.bBase, 6 * 16384);
  EXPECT_EQ(l.sfaBase, 12 * 16384);
  EXPECT_EQ(l.sfbBase, 12 * 16384 + 6 * 512);
  EXPECT_EQ(l.fullBase, 12 * 16384 + 12 * 512);
  EXPECT_EQ(l.emptyBase, 12 * 16384 + 12 * 512 + 6 * 8);
  // 202848 bytes of pipeline rounded up to 1024.
  EXPECT_EQ(l.parkBase, 203776);
  EXPECT_EQ(l.parkBytes, 0);
  EXPECT_EQ(l.totalBytes, 1024 + 203776);
  EXPECT_EQ(l.totalBytes, c.smemBytes());
}

TEST(SmemLayout, PadsScaleSlicesAndPlacesThePark) {
  // 64 x 40, 3 stages, parked (checkConfig would refuse the tile; the layout
  // does not care): sfa 256 bytes, sfb 160 -> 256.
  KernelConfig c = validConfig();
  c.blockM = 64;
  c.mathWarpgroups = 1;
  c.blockN = 40;
  c.stages = 3;
  c.epilogue = Epilogue::Parked;
  SmemLayout l = smemLayoutFor(c);
  EXPECT_EQ(l.aBytes, 8192);
  EXPECT_EQ(l.bBytes, 5120);
  EXPECT_EQ(l.sfaBytes, 256);
  EXPECT_EQ(l.sfbBytes, 256);
  EXPECT_EQ(l.bBase, 3 * 8192);
  EXPECT_EQ(l.sfaBase, 3 * 8192 + 3 * 5120);
  EXPECT_EQ(l.sfbBase, l.sfaBase + 3 * 256);
  EXPECT_EQ(l.fullBase, l.sfbBase + 3 * 256);
  EXPECT_EQ(l.emptyBase, l.fullBase + 24);
  EXPECT_EQ(l.emptyBase + 24, 41520);
  EXPECT_EQ(l.parkBase, 41984); // 41520 rounded up to 1024
  EXPECT_EQ(l.parkBytes, 64 * 40 * 4);
  EXPECT_EQ(l.parkFullBarrier, 41984 + 10240);
  EXPECT_EQ(l.parkEmptyBarrier, l.parkFullBarrier + 8);
  EXPECT_EQ(l.parkRecord, l.parkFullBarrier + 16);
  EXPECT_EQ(l.totalBytes, 1024 + 41984 + 10240 + 32);
  EXPECT_EQ(l.totalBytes, parkedSmemBytesFor(64, 40, 3));
  EXPECT_EQ(l.totalBytes, c.smemBytes());
}

TEST(SmemLayout, AgreesWithSmemBytesForEveryCandidate) {
  for (const KernelConfig &c : candidateKGroupedConfigs(Target())) {
    SCOPED_TRACE(c.entryName());
    SmemLayout l = smemLayoutFor(c);
    EXPECT_EQ(l.totalBytes, c.smemBytes());
    EXPECT_EQ(l.parkBase % 1024, 0);
    // Every region starts 128-byte aligned and fits within the total.
    for (int64_t base : {l.bBase, l.sfaBase, l.sfbBase, l.fullBase})
      EXPECT_EQ(base % 128, 0);
    EXPECT_LE(1024 + l.parkRecord + 16, l.totalBytes + (parked(c) ? 0 : 32));
    EXPECT_EQ(l.parkBytes, parked(c) ? c.blockM * c.blockN * 4 : 0);
  }
}

TEST(ParkTile, FitsAt192ColumnsWithThreeStages) {
  // 128000 bytes of 3-stage pipeline, 128 x 192 FP32, two mbarriers, the
  // tile's coordinates.
  EXPECT_EQ(parkedSmemBytesFor(128, 192, 3), 128000 + 98304 + 16 + 16);
  Target h200;
  KernelConfig c = validConfig();
  c.blockN = 192;
  c.stages = 3;
  c.epilogue = Epilogue::Parked;
  EXPECT_TRUE(parkFits(c, h200));
  EXPECT_EQ(checkConfig(c, h200), "");
  EXPECT_EQ(maxParkedStages(128, 192, h200), 3);
  c.stages = 4; // 171008 + 98304 + 32 bytes
  EXPECT_FALSE(parkFits(c, h200));
  EXPECT_EQ(checkConfig(c, h200),
            "smem_bytes must be <= the target's max dynamic shared memory per "
            "block 232448, got 269344");
  c.stages = 3;
  c.clusterM = 2;
  EXPECT_FALSE(parkFits(c, h200));
  EXPECT_NE(
      checkConfig(c, h200).find("cluster_m must be 1 with epilogue = parked"),
      std::string::npos);
  c.clusterM = 1;
  c.blockN = 176; // not a multiple of 32
  EXPECT_FALSE(parkFits(c, h200));
  EXPECT_NE(checkPark(c).find("block_n must be a multiple of 32"),
            std::string::npos);
  c.blockN = 128; // 4 stages: 137216 + 65536 + 32
  c.stages = 4;
  EXPECT_TRUE(parkFits(c, h200));
  EXPECT_EQ(maxParkedStages(128, 128, h200), 4);
  c.stages = 5;
  EXPECT_FALSE(parkFits(c, h200));
  c.stages = 4;
  c.blockM = 64; // one math warpgroup
  c.mathWarpgroups = 1;
  EXPECT_NE(checkPark(c).find("math_warpgroups must be 2"), std::string::npos);
  c = validConfig();
  c.epilogue = Epilogue(7);
  EXPECT_EQ(checkConfig(c, h200),
            "epilogue must be register, reduction, in_place or parked (0 to "
            "3), got 7");
}

TEST(ParkTile, UnparkIfUnfitKeepsWhatCanParkAndRefitsTheRest) {
  Target h200;
  KernelConfig c = validConfig();
  c.blockN = 128;
  c.stages = 4;
  c.epilogue = Epilogue::Parked;
  KernelConfig kept = c;
  unparkIfUnfit(kept, h200);
  EXPECT_EQ(kept, c);
  // CTA pairs cannot park: the in-place kernel of the same tile, with the
  // stages that fit without the park.
  c.clusterM = 2;
  unparkIfUnfit(c, h200);
  EXPECT_EQ(c.epilogue, Epilogue::InPlace);
  EXPECT_EQ(c.stages, maxStages(128, 128, h200));
  EXPECT_EQ(checkConfig(c, h200), "");
  // A config without the park is left alone, whatever its stages.
  KernelConfig plain = validConfig();
  plain.stages = 2;
  plain.clusterM = 2;
  unparkIfUnfit(plain, h200);
  EXPECT_EQ(plain.stages, 2);
}

TEST(ParkTile, NameAndMetaCountThePark) {
  KernelConfig c = validConfig();
  c.blockN = 192;
  c.stages = 3;
  c.epilogue = Epilogue::InPlace;
  EXPECT_NE(
      c.toMeta().find("\nsmem_bytes=" + std::to_string(c.smemBytes()) + "\n"),
      std::string::npos);
  KernelConfig parked = c;
  parked.epilogue = Epilogue::Parked;
  EXPECT_NE(parked, c);
  EXPECT_EQ(parked.smemBytes(), 226336);
  EXPECT_EQ(parked.entryName(), c.entryName() + "_park");
  EXPECT_NE(parked.toMeta().find("\nsmem_bytes=226336\n"), std::string::npos);
  EXPECT_NE(parked.toMeta().find("\nepilogue=parked\n"), std::string::npos);
  EXPECT_NE(c.toMeta().find("\nepilogue=in_place\n"), std::string::npos);
}

TEST(SmemBytesFor, PadsScaleSlicesTo128Bytes) {
  // block_n = 8: 32 bytes of sfb round up to 128; block_n = 40: 160 -> 256.
  // 2 * (72 * 128 + 256 + 128) + 32 = 19232 -> 19456;
  // 104 * 128 + 256 + 256 + 16 = 13840 -> 14336.
  EXPECT_EQ(pipelineSmemBytesFor(64, 8, 2), 1024 + 19456);
  EXPECT_EQ(pipelineSmemBytesFor(64, 40, 1), 1024 + 14336);
}

TEST(SmemBytesFor, MemberAgreesWithFreeFunction) {
  KernelConfig c = validConfig();
  c.blockN = 176;
  c.stages = 4;
  EXPECT_EQ(c.smemBytes(), pipelineSmemBytesFor(128, 176, 4));
  c.epilogue = Epilogue::Parked;
  EXPECT_EQ(c.smemBytes(), parkedSmemBytesFor(128, 176, 4));
}

TEST(MaxStages, H200) {
  Target h200;
  EXPECT_EQ(maxStages(128, 128, h200), 6);
  EXPECT_EQ(maxStages(128, 192, h200), 5);
  EXPECT_EQ(maxStages(128, 160, h200), 6);
  EXPECT_EQ(maxStages(128, 112, h200), 7);
  EXPECT_EQ(maxStages(64, 192, h200), 6);
  // Would fit 13 stages; capped.
  EXPECT_EQ(maxStages(64, 64, h200), 8);
}

// The stage counts on an SM90 target (232448 bytes) before the TMA
// reduce-add epilogue's buffers were retired: they never cost a stage there,
// so retiring them changes none. For block_n = 8, 16, ..., 256.
TEST(MaxStages, UnchangedByTheRetiredEpilogueBuffers) {
  const std::vector<int> expected[3] = {
      {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8,
       8, 8, 8, 7, 7, 7, 7, 6, 6, 6, 6, 6, 5, 5, 5, 5},
      {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 6,
       6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4},
      {8, 8, 8, 7, 7, 7, 7, 6, 6, 6, 6, 6, 5, 5, 5, 5,
       5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3}};
  const std::vector<int> expectedParked[3] = {
      {8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7,
       7, 7, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 3},
      {8, 8, 8, 8, 8, 8, 8, 7, 7, 6, 6, 6, 5, 5, 5, 4,
       4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1},
      {8, 7, 7, 6, 6, 6, 5, 5, 5, 4, 4, 4, 3, 3, 3, 3,
       2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}};
  const int blockMs[3] = {64, 128, 192};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 32; ++j) {
      int blockN = 8 * (j + 1);
      EXPECT_EQ(maxStages(blockMs[i], blockN, Target()), expected[i][j])
          << blockMs[i] << " x " << blockN;
      EXPECT_EQ(maxParkedStages(blockMs[i], blockN, Target()),
                expectedParked[i][j])
          << blockMs[i] << " x " << blockN;
    }
}

TEST(MaxStages, IsTheLargestThatFits) {
  Target t;
  t.maxSmemPerBlock = int(pipelineSmemBytesFor(128, 128, 3));
  EXPECT_EQ(maxStages(128, 128, t), 3);
  t.maxSmemPerBlock -= 1;
  EXPECT_EQ(maxStages(128, 128, t), 2);
  t.maxSmemPerBlock = 1024;
  EXPECT_EQ(maxStages(128, 128, t), 0);
}

//===----------------------------------------------------------------------===//
// checkConfig
//===----------------------------------------------------------------------===//

TEST(CheckConfig, AcceptsValidConfigs) {
  EXPECT_EQ(checkConfig(validConfig(), Target()), "");
  KernelConfig small = validConfig();
  small.blockM = 64;
  small.mathWarpgroups = 1;
  small.blockN = 8;
  small.stages = 2;
  small.descSlots = 1;
  EXPECT_EQ(checkConfig(small, Target()), "");
  KernelConfig multicastM = validConfig();
  multicastM.clusterM = 2;
  EXPECT_EQ(checkConfig(multicastM, Target()), "");
  KernelConfig multicastN = validConfig();
  multicastN.clusterN = 2;
  EXPECT_EQ(checkConfig(multicastN, Target()), "");
}

TEST(CheckConfig, BlockNMessage) {
  KernelConfig c = validConfig();
  c.blockN = 100;
  EXPECT_EQ(checkConfig(c, Target()),
            "block_n must be a multiple of 8 in [8, 256] (WGMMA N), got 100");
}

TEST(CheckConfig, RejectsBlockM) {
  KernelConfig c = validConfig();
  c.blockM = 96;
  expectRejected(c, "block_m");
  c.blockM = 256;
  c.mathWarpgroups = 4;
  expectRejected(c, "block_m");
}

TEST(CheckConfig, ThreeMathWarpgroups) {
  // block_m = 192: three math warpgroups, at most 128 columns, no pairs.
  KernelConfig c = validConfig();
  c.blockM = 192;
  c.mathWarpgroups = 3;
  c.blockN = 128;
  c.stages = maxStages(192, 128, Target());
  EXPECT_EQ(checkConfig(c, Target()), "");
  EXPECT_EQ(c.threads(), 512);
  c.mathWarpgroups = 2;
  expectRejected(c, "math_warpgroups");
  c.mathWarpgroups = 3;
  c.blockN = 144;
  c.stages = maxStages(192, 144, Target());
  EXPECT_EQ(checkConfig(c, Target()),
            "block_n must be <= 128 with block_m = 192 (register budget of "
            "three math warpgroups: 160 per thread), got 144");
  c.blockN = 128;
  c.stages = maxStages(192, 128, Target());
  c.clusterM = 2;
  expectRejected(c, "cluster_m");
}

TEST(CheckConfig, RejectsMathWarpgroupsNotBlockMOver64) {
  KernelConfig c = validConfig();
  c.blockM = 64;
  expectRejected(c, "math_warpgroups");
  c = validConfig();
  c.mathWarpgroups = 1;
  expectRejected(c, "math_warpgroups");
}

TEST(CheckConfig, RejectsBlockNOutsideWgmmaN) {
  for (int blockN : {0, 4, 100, 264}) {
    KernelConfig c = validConfig();
    c.blockN = blockN;
    c.stages = 2;
    SCOPED_TRACE(blockN);
    expectRejected(c, "block_n");
    EXPECT_NE(checkConfig(c, Target()).find("WGMMA"), std::string::npos);
  }
}

TEST(CheckConfig, RejectsBlockNOverRegisterBudget) {
  KernelConfig c = validConfig();
  c.blockN = 200; // a valid WGMMA N, fits smem at 2 stages
  c.stages = 2;
  expectRejected(c, "block_n");
  EXPECT_NE(checkConfig(c, Target()).find("register"), std::string::npos);
  c.blockN = 192;
  EXPECT_EQ(checkConfig(c, Target()), "");
}

TEST(CheckConfig, RejectsBlockK) {
  KernelConfig c = validConfig();
  c.blockK = 64;
  expectRejected(c, "block_k");
}

TEST(CheckConfig, RejectsStages) {
  KernelConfig c = validConfig();
  c.stages = 1;
  expectRejected(c, "stages");
  c.stages = 0;
  expectRejected(c, "stages");
}

TEST(CheckConfig, RejectsDescSlots) {
  KernelConfig c = validConfig();
  c.descSlots = 3;
  expectRejected(c, "desc_slots");
  c.descSlots = 0;
  expectRejected(c, "desc_slots");
}

TEST(CheckConfig, RejectsSmemOverTarget) {
  KernelConfig c = validConfig();
  c.stages = 7; // 237680 bytes > 232448
  expectRejected(c, "smem_bytes");
  Target small;
  small.maxSmemPerBlock = 101376;
  c.stages = 6;
  EXPECT_NE(checkConfig(c, small).find("smem_bytes"), std::string::npos);
}

TEST(CheckConfig, RejectsClusterDims) {
  KernelConfig c = validConfig();
  c.clusterM = 3;
  expectRejected(c, "cluster_m");
  c = validConfig();
  c.clusterN = 0;
  expectRejected(c, "cluster_n");
  c = validConfig();
  c.clusterM = 2;
  c.clusterN = 2;
  expectRejected(c, "cluster_m");
  expectRejected(c, "cluster_n");
}

TEST(CheckConfig, MulticastNeedsBlockNMultipleOf16) {
  // Each CTA of a pair loads block_n / 2 rows of B at offset rank * block_n
  // / 2 * 128 bytes, which must be a whole 1024-byte 128B-swizzle atom.
  KernelConfig c = validConfig();
  c.clusterM = 2;
  c.stages = 4; // within the shared memory limit for both widths below
  c.blockN = 200;
  expectRejected(c, "block_n");
  c.blockN = 192;
  EXPECT_EQ(checkConfig(c, Target()), "");
}

TEST(CheckConfig, RejectsSwizzle) {
  KernelConfig c = validConfig();
  c.swizzleA = 64;
  expectRejected(c, "swizzle_a");
  c = validConfig();
  c.swizzleB = 32;
  expectRejected(c, "swizzle_b");
}

TEST(CheckConfig, RejectsNumSMs) {
  KernelConfig c = validConfig();
  c.numSMs = 0;
  expectRejected(c, "num_sms");
}

//===----------------------------------------------------------------------===//
// Names and metadata
//===----------------------------------------------------------------------===//

TEST(KernelConfig, Threads) {
  KernelConfig c = validConfig();
  EXPECT_EQ(c.threads(), 384);
  c.blockM = 64;
  c.mathWarpgroups = 1;
  EXPECT_EQ(c.threads(), 256);
}

TEST(KernelConfig, EntryName) {
  KernelConfig c = validConfig();
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2");
  c.blockM = 64;
  c.blockN = 96;
  c.stages = 8;
  c.descSlots = 1;
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm64_bn96_s8_r1");
  c.clusterM = 2;
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm64_bn96_s8_r1_c2x1");
  c.clusterM = 1;
  c.clusterN = 2;
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm64_bn96_s8_r1_c1x2");
}

TEST(KernelConfig, ToMeta) {
  static_assert(kHeuristicsVersion == 3, "update the expected .meta");
  EXPECT_EQ(validConfig().toMeta(),
            "entry=dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2\n"
            "kind=k_grouped_contiguous\n"
            "abi=4\n"
            "block_m=128\n"
            "block_n=128\n"
            "block_k=128\n"
            "stages=6\n"
            "desc_slots=2\n"
            "math_warpgroups=2\n"
            "threads=384\n"
            "cluster_m=1\n"
            "cluster_n=1\n"
            "smem_bytes=204800\n"
            "red_max_blocks=0\n"
            "epilogue=register\n"
            "quad_b=0\n"
            "unsafe=none\n"
            "heuristics_version=3\n");
  KernelConfig c = validConfig();
  c.clusterN = 2;
  std::string meta = c.toMeta();
  EXPECT_NE(meta.find("entry=dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c1x2\n"),
            std::string::npos);
  EXPECT_NE(meta.find("\ncluster_n=2\n"), std::string::npos);
  c = validConfig();
  c.epilogue = Epilogue::Reduction;
  c.redMaxBlocks = 8;
  meta = c.toMeta();
  EXPECT_NE(meta.find("entry=dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_red8\n"),
            std::string::npos);
  EXPECT_NE(meta.find("\nred_max_blocks=8\nepilogue=reduction\n"),
            std::string::npos);
  c = validConfig();
  c.epilogue = Epilogue::InPlace;
  meta = c.toMeta();
  EXPECT_NE(meta.find("entry=dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_ip\n"),
            std::string::npos);
  EXPECT_NE(meta.find("\nepilogue=in_place\n"), std::string::npos);
  EXPECT_EQ(meta.find("in_place_only"), std::string::npos);
  EXPECT_EQ(meta.find("park="), std::string::npos);
  c = validConfig();
  c.descSlots = 1;
  c.unsafe = 0u | Unsafe::SkipDescriptorDrain;
  meta = c.toMeta();
  EXPECT_NE(meta.find("entry=dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r1_unsafe_"
                      "nodrain\n"),
            std::string::npos);
  EXPECT_NE(meta.find("\nunsafe=skip_descriptor_drain\n"), std::string::npos);
}

TEST(KernelConfig, InPlaceKernelNamesAndDistinguishesTheKernel) {
  KernelConfig c = validConfig();
  c.clusterM = 2;
  c.epilogue = Epilogue::InPlace;
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_ip");
  KernelConfig plain = c;
  plain.epilogue = Epilogue::Register;
  EXPECT_NE(c, plain);
}

TEST(KernelConfig, UnsafeNamesComeLastAndDistinguishTheKernel) {
  KernelConfig c = validConfig();
  c.blockN = 128;
  c.stages = 4;
  c.epilogue = Epilogue::Parked;
  c.unsafe = unsigned(Unsafe::SkipProxyFence);
  EXPECT_EQ(c.entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s4_r2_ip_park_unsafe_nofence");
  c.unsafe = unsigned(Unsafe::SkipDescriptorDrain | Unsafe::SkipProxyFence);
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s4_r2_ip_park_"
                           "unsafe_nodrain_unsafe_nofence");
  EXPECT_NE(
      c.toMeta().find("\nunsafe=skip_descriptor_drain,skip_proxy_fence\n"),
      std::string::npos);
  KernelConfig safe = c;
  safe.unsafe = 0;
  EXPECT_NE(c, safe);
  EXPECT_EQ(checkConfig(c, Target()), "");
  c.unsafe = 4;
  EXPECT_EQ(checkConfig(c, Target()),
            "unsafe must be a set of skip_descriptor_drain (1) and "
            "skip_proxy_fence (2), got 4");
}

TEST(CheckConfig, InPlaceKernelsHaveNoBoundNorQuadB) {
  KernelConfig c = validConfig();
  c.epilogue = Epilogue::InPlace;
  EXPECT_EQ(checkConfig(c, Target()), "");
  c.redMaxBlocks = 8;
  EXPECT_EQ(checkConfig(c, Target()),
            "red_max_blocks must be 0 with epilogue = in_place (only the "
            "reduction epilogue has a bound), got 8");
  c.redMaxBlocks = 0;
  c.quadB = 1;
  EXPECT_EQ(checkConfig(c, Target()),
            "quad_b must be 0 with epilogue = in_place (quad-ordered B "
            "measured slower in the in-place kernel; not built), got 1");
}

TEST(KernelConfig, RedMaxBlocksNamesAndDistinguishesTheKernel) {
  KernelConfig c = validConfig();
  c.clusterM = 2;
  c.epilogue = Epilogue::Reduction;
  c.redMaxBlocks = 8;
  EXPECT_EQ(c.entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_red8");
  KernelConfig other = c;
  other.redMaxBlocks = 4;
  EXPECT_NE(c, other);
}

TEST(CheckConfig, RejectsRedMaxBlocks) {
  KernelConfig c = validConfig();
  c.epilogue = Epilogue::Reduction;
  c.redMaxBlocks = -1;
  expectRejected(c, "red_max_blocks");
  EXPECT_EQ(checkConfig(c, Target()),
            "red_max_blocks must be in [0, 1048576] (0: no reduction "
            "epilogue), got -1");
  c.redMaxBlocks = (1 << 20) + 1;
  expectRejected(c, "red_max_blocks");
  c.redMaxBlocks = 1 << 20;
  EXPECT_EQ(checkConfig(c, Target()), "");
  // Exactly the reduction epilogue has a bound.
  c.redMaxBlocks = 0;
  EXPECT_EQ(checkConfig(c, Target()),
            "red_max_blocks must be > 0 with epilogue = reduction (the "
            "longest tile, in K blocks, that reduces), got 0");
  c.epilogue = Epilogue::Register;
  c.redMaxBlocks = 8;
  EXPECT_EQ(checkConfig(c, Target()),
            "red_max_blocks must be 0 with epilogue = register (only the "
            "reduction epilogue has a bound), got 8");
}

//===----------------------------------------------------------------------===//
// Epilogue and Unsafe names
//===----------------------------------------------------------------------===//

TEST(Epilogue, NamesRoundTrip) {
  const std::pair<Epilogue, const char *> names[] = {
      {Epilogue::Register, "register"},
      {Epilogue::Reduction, "reduction"},
      {Epilogue::InPlace, "in_place"},
      {Epilogue::Parked, "parked"}};
  for (const auto &[epilogue, name] : names) {
    EXPECT_STREQ(epilogueName(epilogue), name);
    EXPECT_EQ(parseEpilogue(name), epilogue);
  }
  EXPECT_STREQ(epilogueName(Epilogue(4)), "invalid");
  for (const char *bad :
       {"", "Register", "in-place", "inplace", "park", "invalid", "register "})
    EXPECT_EQ(parseEpilogue(bad), std::nullopt) << bad;
  EXPECT_FALSE(isInPlaceKernel(Epilogue::Register));
  EXPECT_FALSE(isInPlaceKernel(Epilogue::Reduction));
  EXPECT_TRUE(isInPlaceKernel(Epilogue::InPlace));
  EXPECT_TRUE(isInPlaceKernel(Epilogue::Parked));
}

TEST(Unsafe, NamesRoundTrip) {
  const unsigned drain = unsigned(Unsafe::SkipDescriptorDrain);
  const unsigned fence = unsigned(Unsafe::SkipProxyFence);
  EXPECT_EQ(unsafeNames(0), "");
  EXPECT_EQ(unsafeNames(drain), "skip_descriptor_drain");
  EXPECT_EQ(unsafeNames(fence), "skip_proxy_fence");
  EXPECT_EQ(unsafeNames(drain | fence),
            "skip_descriptor_drain,skip_proxy_fence");
  EXPECT_EQ(unsafeNames(8), "bit3");
  for (unsigned bits : {0u, drain, fence, drain | fence})
    EXPECT_EQ(parseUnsafe(bits ? unsafeNames(bits) : "none"), bits);
  EXPECT_EQ(parseUnsafe("skip_proxy_fence,skip_descriptor_drain"),
            drain | fence);
  for (const char *bad :
       {"", "None", "none,skip_proxy_fence", "skip_proxy_fence,",
        ",skip_proxy_fence", "skip_proxy_fence,skip_proxy_fence",
        "skip_descriptor_drain, skip_proxy_fence", "nodrain", "bit3"})
    EXPECT_EQ(parseUnsafe(bad), std::nullopt) << bad;
  EXPECT_EQ(Unsafe::SkipDescriptorDrain & Unsafe::SkipProxyFence, Unsafe::None);
  EXPECT_EQ(unsigned(Unsafe::SkipDescriptorDrain | Unsafe::SkipProxyFence),
            kUnsafeMask);
}

//===----------------------------------------------------------------------===//
// Candidates
//===----------------------------------------------------------------------===//

TEST(Candidates, AllValidUniqueAndMaximallyStaged) {
  Target h200;
  std::vector<KernelConfig> candidates = candidateKGroupedConfigs(h200);
  // 70 selectable kernels, then 4 three-warpgroup tiles in 3 forms each,
  // then 56 of those with quad-ordered B, then the 5 in-place kernels
  // whose width is a multiple of 32 with parked tiles.
  EXPECT_EQ(candidates.size(), 143u);
  std::set<std::string> names;
  for (const KernelConfig &c : candidates) {
    SCOPED_TRACE(c.entryName());
    EXPECT_EQ(checkConfig(c, h200), "");
    EXPECT_EQ(c.descSlots, 2);
    size_t index = size_t(&c - candidates.data());
    EXPECT_EQ(parked(c), index >= 138 ? 1 : 0);
    if (index >= 138) {
      // The in-place twin is a candidate; the park takes stages.
      EXPECT_TRUE(parkFits(c, h200));
      EXPECT_EQ(c.stages, maxParkedStages(c.blockM, c.blockN, h200));
      KernelConfig twin = c;
      twin.epilogue = Epilogue::InPlace;
      twin.stages = maxStages(c.blockM, c.blockN, h200);
      EXPECT_NE(std::find(candidates.begin(), candidates.begin() + 138, twin),
                candidates.begin() + 138);
      EXPECT_TRUE(names.insert(c.entryName()).second) << "duplicate";
      continue;
    }
    EXPECT_EQ(c.stages, maxStages(c.blockM, c.blockN, h200));
    EXPECT_EQ(c.quadB, index >= 82 ? 1 : 0);
    if (index >= 82) {
      // Its natural-order twin comes first, and it has an epilogue that
      // takes quad order (never the in-place kernel).
      KernelConfig natural = c;
      natural.quadB = 0;
      EXPECT_NE(std::find(candidates.begin(), candidates.begin() + 82, natural),
                candidates.begin() + 82);
      EXPECT_EQ(inPlaceKernel(c), 0);
      EXPECT_EQ(c.blockN % (16 * c.clusterM), 0);
      EXPECT_TRUE(names.insert(c.entryName()).second) << "duplicate";
      continue;
    }
    EXPECT_EQ(c.clusterM, index < 56 && index % 28 >= 14 ? 2 : 1);
    if (index >= 70) {
      EXPECT_EQ(c.blockM, 192);
      EXPECT_EQ(c.mathWarpgroups, 3);
      EXPECT_LE(c.blockN, 128);
      EXPECT_EQ(c.redMaxBlocks,
                (index - 70) % 3 == 1 ? kRedEpilogueTileBlocks : 0);
      EXPECT_EQ(inPlaceKernel(c), (index - 70) % 3 == 2 ? 1 : 0);
      EXPECT_TRUE(names.insert(c.entryName()).second) << "duplicate";
      continue;
    }
    EXPECT_NE(c.blockM, 192);
    EXPECT_EQ(c.redMaxBlocks,
              index >= 28 && index < 56 ? kRedEpilogueTileBlocks : 0);
    EXPECT_EQ(inPlaceKernel(c), index >= 56 ? 1 : 0);
    EXPECT_EQ(c.clusterN, 1);
    EXPECT_EQ(c.numSMs, 132);
    EXPECT_EQ(c.blockN % 16, 0);
    EXPECT_TRUE(names.insert(c.entryName()).second) << "duplicate";
  }
}

// The entry names of the default target's candidates as the code wrote them
// before the epilogue became an enum (in_place_only and park): renaming the
// fields must not rename a kernel, or existing bundles would miss them.
TEST(Candidates, EntryNamesUnchanged) {
  const char *const expected[] = {
      "bm128_bn192_s5_r2",
      "bm128_bn160_s6_r2",
      "bm128_bn144_s6_r2",
      "bm128_bn128_s6_r2",
      "bm128_bn112_s7_r2",
      "bm128_bn96_s7_r2",
      "bm128_bn64_s8_r2",
      "bm64_bn192_s6_r2",
      "bm64_bn160_s7_r2",
      "bm64_bn144_s8_r2",
      "bm64_bn128_s8_r2",
      "bm64_bn112_s8_r2",
      "bm64_bn96_s8_r2",
      "bm64_bn64_s8_r2",
      "bm128_bn192_s5_r2_c2x1",
      "bm128_bn160_s6_r2_c2x1",
      "bm128_bn144_s6_r2_c2x1",
      "bm128_bn128_s6_r2_c2x1",
      "bm128_bn112_s7_r2_c2x1",
      "bm128_bn96_s7_r2_c2x1",
      "bm128_bn64_s8_r2_c2x1",
      "bm64_bn192_s6_r2_c2x1",
      "bm64_bn160_s7_r2_c2x1",
      "bm64_bn144_s8_r2_c2x1",
      "bm64_bn128_s8_r2_c2x1",
      "bm64_bn112_s8_r2_c2x1",
      "bm64_bn96_s8_r2_c2x1",
      "bm64_bn64_s8_r2_c2x1",
      "bm128_bn192_s5_r2_red8",
      "bm128_bn160_s6_r2_red8",
      "bm128_bn144_s6_r2_red8",
      "bm128_bn128_s6_r2_red8",
      "bm128_bn112_s7_r2_red8",
      "bm128_bn96_s7_r2_red8",
      "bm128_bn64_s8_r2_red8",
      "bm64_bn192_s6_r2_red8",
      "bm64_bn160_s7_r2_red8",
      "bm64_bn144_s8_r2_red8",
      "bm64_bn128_s8_r2_red8",
      "bm64_bn112_s8_r2_red8",
      "bm64_bn96_s8_r2_red8",
      "bm64_bn64_s8_r2_red8",
      "bm128_bn192_s5_r2_c2x1_red8",
      "bm128_bn160_s6_r2_c2x1_red8",
      "bm128_bn144_s6_r2_c2x1_red8",
      "bm128_bn128_s6_r2_c2x1_red8",
      "bm128_bn112_s7_r2_c2x1_red8",
      "bm128_bn96_s7_r2_c2x1_red8",
      "bm128_bn64_s8_r2_c2x1_red8",
      "bm64_bn192_s6_r2_c2x1_red8",
      "bm64_bn160_s7_r2_c2x1_red8",
      "bm64_bn144_s8_r2_c2x1_red8",
      "bm64_bn128_s8_r2_c2x1_red8",
      "bm64_bn112_s8_r2_c2x1_red8",
      "bm64_bn96_s8_r2_c2x1_red8",
      "bm64_bn64_s8_r2_c2x1_red8",
      "bm128_bn192_s5_r2_ip",
      "bm128_bn160_s6_r2_ip",
      "bm128_bn144_s6_r2_ip",
      "bm128_bn128_s6_r2_ip",
      "bm128_bn112_s7_r2_ip",
      "bm128_bn96_s7_r2_ip",
      "bm128_bn64_s8_r2_ip",
      "bm64_bn192_s6_r2_ip",
      "bm64_bn160_s7_r2_ip",
      "bm64_bn144_s8_r2_ip",
      "bm64_bn128_s8_r2_ip",
      "bm64_bn112_s8_r2_ip",
      "bm64_bn96_s8_r2_ip",
      "bm64_bn64_s8_r2_ip",
      "bm192_bn128_s5_r2",
      "bm192_bn128_s5_r2_red8",
      "bm192_bn128_s5_r2_ip",
      "bm192_bn112_s5_r2",
      "bm192_bn112_s5_r2_red8",
      "bm192_bn112_s5_r2_ip",
      "bm192_bn96_s6_r2",
      "bm192_bn96_s6_r2_red8",
      "bm192_bn96_s6_r2_ip",
      "bm192_bn64_s6_r2",
      "bm192_bn64_s6_r2_red8",
      "bm192_bn64_s6_r2_ip",
      "bm128_bn192_s5_r2_q",
      "bm128_bn160_s6_r2_q",
      "bm128_bn144_s6_r2_q",
      "bm128_bn128_s6_r2_q",
      "bm128_bn112_s7_r2_q",
      "bm128_bn96_s7_r2_q",
      "bm128_bn64_s8_r2_q",
      "bm64_bn192_s6_r2_q",
      "bm64_bn160_s7_r2_q",
      "bm64_bn144_s8_r2_q",
      "bm64_bn128_s8_r2_q",
      "bm64_bn112_s8_r2_q",
      "bm64_bn96_s8_r2_q",
      "bm64_bn64_s8_r2_q",
      "bm128_bn192_s5_r2_c2x1_q",
      "bm128_bn160_s6_r2_c2x1_q",
      "bm128_bn128_s6_r2_c2x1_q",
      "bm128_bn96_s7_r2_c2x1_q",
      "bm128_bn64_s8_r2_c2x1_q",
      "bm64_bn192_s6_r2_c2x1_q",
      "bm64_bn160_s7_r2_c2x1_q",
      "bm64_bn128_s8_r2_c2x1_q",
      "bm64_bn96_s8_r2_c2x1_q",
      "bm64_bn64_s8_r2_c2x1_q",
      "bm128_bn192_s5_r2_red8_q",
      "bm128_bn160_s6_r2_red8_q",
      "bm128_bn144_s6_r2_red8_q",
      "bm128_bn128_s6_r2_red8_q",
      "bm128_bn112_s7_r2_red8_q",
      "bm128_bn96_s7_r2_red8_q",
      "bm128_bn64_s8_r2_red8_q",
      "bm64_bn192_s6_r2_red8_q",
      "bm64_bn160_s7_r2_red8_q",
      "bm64_bn144_s8_r2_red8_q",
      "bm64_bn128_s8_r2_red8_q",
      "bm64_bn112_s8_r2_red8_q",
      "bm64_bn96_s8_r2_red8_q",
      "bm64_bn64_s8_r2_red8_q",
      "bm128_bn192_s5_r2_c2x1_red8_q",
      "bm128_bn160_s6_r2_c2x1_red8_q",
      "bm128_bn128_s6_r2_c2x1_red8_q",
      "bm128_bn96_s7_r2_c2x1_red8_q",
      "bm128_bn64_s8_r2_c2x1_red8_q",
      "bm64_bn192_s6_r2_c2x1_red8_q",
      "bm64_bn160_s7_r2_c2x1_red8_q",
      "bm64_bn128_s8_r2_c2x1_red8_q",
      "bm64_bn96_s8_r2_c2x1_red8_q",
      "bm64_bn64_s8_r2_c2x1_red8_q",
      "bm192_bn128_s5_r2_q",
      "bm192_bn128_s5_r2_red8_q",
      "bm192_bn112_s5_r2_q",
      "bm192_bn112_s5_r2_red8_q",
      "bm192_bn96_s6_r2_q",
      "bm192_bn96_s6_r2_red8_q",
      "bm192_bn64_s6_r2_q",
      "bm192_bn64_s6_r2_red8_q",
      "bm128_bn192_s3_r2_ip_park",
      "bm128_bn160_s3_r2_ip_park",
      "bm128_bn128_s4_r2_ip_park",
      "bm128_bn96_s6_r2_ip_park",
      "bm128_bn64_s7_r2_ip_park",
  };
  std::vector<KernelConfig> candidates = candidateKGroupedConfigs(Target());
  ASSERT_EQ(candidates.size(), std::size(expected));
  for (size_t i = 0; i < candidates.size(); ++i)
    EXPECT_EQ(candidates[i].entryName(),
              std::string("dgemm_kgrouped_fp8_1d1d_") + expected[i])
        << "candidate " << i;
}

TEST(Candidates, DeterministicOrder) {
  std::vector<KernelConfig> a = candidateKGroupedConfigs(Target());
  std::vector<KernelConfig> b = candidateKGroupedConfigs(Target());
  EXPECT_EQ(a, b);
  ASSERT_FALSE(a.empty());
  // Preference order: block_m = 128 first, larger block_n first.
  EXPECT_EQ(a.front().entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2");
  // Then the same tiles with B multicast across CTA pairs.
  EXPECT_EQ(a[13].entryName(), "dgemm_kgrouped_fp8_1d1d_bm64_bn64_s8_r2");
  EXPECT_EQ(a[27].entryName(), "dgemm_kgrouped_fp8_1d1d_bm64_bn64_s8_r2_c2x1");
  // Then all of them with the reduction epilogue.
  EXPECT_EQ(a[28].entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_red8");
  EXPECT_EQ(a[55].entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm64_bn64_s8_r2_c2x1_red8");
  // Then every tile shape as an in-place kernel, never paired.
  EXPECT_EQ(a[56].entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_ip");
  EXPECT_EQ(a[69].entryName(), "dgemm_kgrouped_fp8_1d1d_bm64_bn64_s8_r2_ip");
  // Then the three-warpgroup tiles, each with its reduction and in-place
  // forms.
  EXPECT_EQ(a[70].entryName(), "dgemm_kgrouped_fp8_1d1d_bm192_bn128_s5_r2");
  EXPECT_EQ(a[71].entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm192_bn128_s5_r2_red8");
  EXPECT_EQ(a[72].entryName(), "dgemm_kgrouped_fp8_1d1d_bm192_bn128_s5_r2_ip");
  EXPECT_EQ(a[81].entryName(), "dgemm_kgrouped_fp8_1d1d_bm192_bn64_s6_r2_ip");
  // Then quad-ordered B, in the same order, for every kernel but the
  // in-place ones whose width allows it.
  EXPECT_EQ(a[82].entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_q");
  EXPECT_EQ(a[137].entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm192_bn64_s6_r2_red8_q");
  // Then the in-place kernels that can park their tiles, parked.
  EXPECT_EQ(a[138].entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s3_r2_ip_park");
  EXPECT_EQ(a[140].entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s4_r2_ip_park");
  EXPECT_EQ(a.back().entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn64_s7_r2_ip_park");
}

TEST(Candidates, FollowTheTarget) {
  Target t;
  t.numSMs = 78;
  t.maxSmemPerBlock = 101376;
  std::vector<KernelConfig> candidates = candidateKGroupedConfigs(t);
  ASSERT_FALSE(candidates.empty());
  for (const KernelConfig &c : candidates) {
    SCOPED_TRACE(c.entryName());
    EXPECT_EQ(checkConfig(c, t), "");
    EXPECT_EQ(c.numSMs, 78);
    EXPECT_EQ(c.stages, parked(c) ? maxParkedStages(c.blockM, c.blockN, t)
                                  : maxStages(c.blockM, c.blockN, t));
  }
}

TEST(Candidates, CoverEverySelection) {
  Target h200;
  std::vector<KernelConfig> candidates = candidateKGroupedConfigs(h200);
  std::set<std::string> selected;
  for (int64_t m : {64, 192, 256, 1024, 2048, 4096, 7168})
    for (int64_t n : {64, 200, 512, 2048, 7168})
      for (int g : {1, 4, 32})
        for (int64_t k : {128, 1024, 8192})
          for (bool inPlace : {false, true}) {
            KGroupedProblem problem = uniformProblem(g, m, n, k);
            problem.inPlace = inPlace;
            KernelConfig c = selectKGroupedConfig(problem, h200);
            selected.insert(c.entryName());
            EXPECT_NE(std::find(candidates.begin(), candidates.end(), c),
                      candidates.end())
                << c.entryName() << " is not a candidate";
          }
  // The sweep exercises both block_m values and several block_n values.
  EXPECT_GE(selected.size(), 4u);
}

//===----------------------------------------------------------------------===//
// Cost model
//===----------------------------------------------------------------------===//

TEST(Makespan, MatchesTileByTileRoundRobin) {
  Target t;
  // 15 tiles per group on 9 CTAs: remainders of 6 that wrap around the grid.
  t.numSMs = 9;
  KernelConfig c = validConfig();
  KGroupedProblem p;
  p.m = 300;
  p.n = 520;
  p.ks = {256, 0, 128, 1000, 4096};
  // Cost of one tile of a group: a problem that is exactly that tile.
  auto tileCost = [&](int64_t k) {
    KGroupedProblem one;
    one.m = c.blockM;
    one.n = c.blockN;
    one.ks = {k};
    return estimateKGroupedMakespanUs(one, c, t);
  };
  int64_t tilesPerGroup = 3 * 5;
  std::vector<double> load(t.numSMs, 0.0);
  int64_t tile = 0;
  for (int64_t k : p.ks)
    for (int64_t i = 0; i < tilesPerGroup; ++i, ++tile)
      load[tile % t.numSMs] += tileCost(k);
  double expected = *std::max_element(load.begin(), load.end());
  EXPECT_NEAR(estimateKGroupedMakespanUs(p, c, t), expected, 1e-9 * expected);
}

TEST(Makespan, ZeroKTileSkipsPipelineFill) {
  // A K = 0 tile only copies c to d: going 0 -> 128 adds a K block and the
  // pipeline fill, going 128 -> 256 only adds a K block.
  KernelConfig c = validConfig();
  auto tileCost = [&](int64_t k) {
    KGroupedProblem one;
    one.m = c.blockM;
    one.n = c.blockN;
    one.ks = {k};
    return estimateKGroupedMakespanUs(one, c, Target());
  };
  double kBlock = tileCost(256) - tileCost(128);
  EXPECT_GT(kBlock, 0.0);
  EXPECT_GT(tileCost(0), 0.0);
  EXPECT_GT(tileCost(128) - tileCost(0), kBlock + 0.5);
  // K is padded to whole 128-blocks.
  EXPECT_DOUBLE_EQ(tileCost(1), tileCost(128));
}

TEST(Makespan, GridSmallerThanSMs) {
  // 2 tiles on 132 SMs: both run concurrently, makespan = one tile.
  KernelConfig c = validConfig();
  KGroupedProblem p;
  p.m = 256;
  p.n = 128;
  p.ks = {4096};
  KGroupedProblem one = p;
  one.m = 128;
  EXPECT_DOUBLE_EQ(estimateKGroupedMakespanUs(p, c, Target()),
                   estimateKGroupedMakespanUs(one, c, Target()));
}

TEST(Makespan, Bm64IsSlowerPerElement) {
  // Same 128x128 output area, one CTA: bm=64 takes two 64-row tiles at 0.6x.
  Target one;
  one.numSMs = 1;
  KGroupedProblem p = uniformProblem(1, 128, 128, 8192);
  KernelConfig bm64 = validConfig();
  bm64.blockM = 64;
  bm64.mathWarpgroups = 1;
  EXPECT_GT(estimateKGroupedMakespanUs(p, bm64, one),
            1.5 * estimateKGroupedMakespanUs(p, validConfig(), one));
}

TEST(Makespan, EmptyProblemIsFree) {
  EXPECT_EQ(
      estimateKGroupedMakespanUs(KGroupedProblem(), validConfig(), Target()),
      0.0);
  EXPECT_EQ(estimateKGroupedMakespanUs(uniformProblem(4, 0, 128, 128),
                                       validConfig(), Target()),
            0.0);
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

struct PinnedShape {
  const char *name;
  int numGroups;
  int64_t m, n, kPerGroup;
  const char *entry;
};

// Keeps test names readable (gtest would otherwise print the bytes).
std::ostream &operator<<(std::ostream &os, const PinnedShape &s) {
  return os << s.name;
}

class DeepGemmKGroupedShapes : public ::testing::TestWithParam<PinnedShape> {};

// DeepGEMM's k-grouped benchmark shapes on 132 SMs. Pinned so that a change to
// the model or the candidate set shows up as a deliberate test update; the
// reasoning per shape is in docs/Heuristics.md.
TEST_P(DeepGemmKGroupedShapes, Pinned) {
  const PinnedShape &s = GetParam();
  Target h200;
  KernelConfig c = selectKGroupedConfig(
      uniformProblem(s.numGroups, s.m, s.n, s.kPerGroup), h200);
  EXPECT_EQ(c.entryName(), s.entry);
  EXPECT_EQ(c.blockM, 128);
  EXPECT_EQ(c.mathWarpgroups, 2);
  EXPECT_EQ(c.numSMs, 132);
  // Even m-block counts; B is multicast only for the wide (N = 7168) ones.
  EXPECT_EQ(c.clusterM, s.n >= 4096 ? 2 : 1);
  EXPECT_EQ(c.quadB, 1);
  EXPECT_EQ(checkConfig(c, h200), "");
}

TEST(Select, QuadOrderedB) {
  Target h200;
  // Every shape with N % 16 == 0 gets quad-ordered B with a separate c and
  // with the reduction kernel, never with the in-place kernel.
  KGroupedProblem p = uniformProblem(4, 2048, 2048, 1024);
  EXPECT_EQ(selectKGroupedConfig(p, h200).quadB, 1);
  p.inPlace = true;
  KernelConfig reducing = selectKGroupedConfig(p, h200);
  EXPECT_GT(reducing.redMaxBlocks, 0);
  EXPECT_EQ(reducing.quadB, 1);
  KGroupedProblem longGroups = uniformProblem(4, 2048, 2048, 8192);
  longGroups.inPlace = true;
  KernelConfig inPlace = selectKGroupedConfig(longGroups, h200);
  EXPECT_EQ(inPlaceKernel(inPlace), 1);
  EXPECT_EQ(inPlace.quadB, 0);
  // N % 16 != 0: B's rows in order (the 5-D map has whole 16-row groups).
  for (int64_t n : {2056, 2052, 200}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(selectKGroupedConfig(uniformProblem(4, 2048, n, 256), h200).quadB,
              0);
  }
  // The rules themselves.
  KernelConfig c = validConfig();
  EXPECT_TRUE(quadBFits(c, 2048, h200));
  EXPECT_FALSE(quadBFits(c, 2040, h200));
  c.epilogue = Epilogue::InPlace;
  EXPECT_FALSE(quadBFits(c, 2048, h200));
  c = validConfig();
  c.blockN = 144;
  c.stages = maxStages(c.blockM, c.blockN, h200);
  EXPECT_TRUE(quadBFits(c, 2048, h200));
  c.clusterM = 2; // halves of 72 rows
  EXPECT_FALSE(quadBFits(c, 2048, h200));
  c.quadB = 1;
  expectRejected(c, "block_n");
  c = validConfig();
  c.quadB = 1;
  EXPECT_EQ(checkConfig(c, h200), "");
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q");
  EXPECT_NE(c.toMeta().find("\nquad_b=1\n"), std::string::npos);
  c.epilogue = Epilogue::InPlace;
  expectRejected(c, "quad_b");
  c.epilogue = Epilogue::Register;
  c.quadB = 2;
  expectRejected(c, "quad_b");
}

TEST(Select, MulticastNeedsEvenMBlocksAndWideN) {
  // 17 m-blocks of 128: a pair would leave one CTA computing past M.
  KernelConfig odd =
      selectKGroupedConfig(uniformProblem(4, 17 * 128, 7168, 1024), Target());
  EXPECT_EQ(odd.clusterM, 1);
  KernelConfig even =
      selectKGroupedConfig(uniformProblem(4, 16 * 128, 7168, 1024), Target());
  EXPECT_EQ(even.clusterM, 2);
  KernelConfig narrow =
      selectKGroupedConfig(uniformProblem(4, 16 * 128, 2048, 1024), Target());
  EXPECT_EQ(narrow.clusterM, 1);
}

INSTANTIATE_TEST_SUITE_P(
    H200, DeepGemmKGroupedShapes,
    ::testing::Values(
        PinnedShape{"G4_M4096_N7168_K8192", 4, 4096, 7168, 8192,
                    "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_c2x1_q"},
        PinnedShape{"G4_M7168_N2048_K8192", 4, 7168, 2048, 8192,
                    "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_q"},
        PinnedShape{"G8_M4096_N7168_K4096", 8, 4096, 7168, 4096,
                    "dgemm_kgrouped_fp8_1d1d_bm128_bn192_s5_r2_c2x1_q"},
        PinnedShape{"G8_M7168_N2048_K4096", 8, 7168, 2048, 4096,
                    "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q"},
        PinnedShape{"G16_M4096_N7168_K2048", 16, 4096, 7168, 2048,
                    "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_q"},
        PinnedShape{"G16_M7168_N2048_K2048", 16, 7168, 2048, 2048,
                    "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q"}),
    [](const ::testing::TestParamInfo<PinnedShape> &info) {
      return std::string(info.param.name);
    });

TEST(Select, SeedShapePinned) {
  // The bug report's shape: 4 experts, 2048 x 2048, ks = {256, 128, 128, 256}.
  KGroupedProblem p;
  p.m = 2048;
  p.n = 2048;
  p.numGroups = 4;
  p.ks = {256, 128, 128, 256};
  KernelConfig c = selectKGroupedConfig(p, Target());
  // Groups of 1-2 K blocks: 64-column tiles. N = 2048 is too narrow for B
  // multicast to pay; quad-ordered B (N is a multiple of 16).
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn64_s8_r2_q");
  EXPECT_EQ(c.threads(), 384);
  EXPECT_EQ(c.smemBytes(), 204800);
}

TEST(Select, Deterministic) {
  KGroupedProblem p;
  p.m = 3072;
  p.n = 5120;
  p.numGroups = 6;
  p.ks = {128, 4096, 0, 1920, 384, 8192};
  KGroupedProblem copy = p;
  KernelConfig first = selectKGroupedConfig(p, Target());
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(selectKGroupedConfig(p, Target()), first);
    EXPECT_EQ(selectKGroupedConfig(copy, Target()), first);
  }
  EXPECT_EQ(estimateKGroupedMakespanUs(p, first, Target()),
            estimateKGroupedMakespanUs(copy, first, Target()));
}

TEST(Select, KsWithZeros) {
  Target h200;
  KGroupedProblem p;
  p.m = 2048;
  p.n = 2048;
  p.numGroups = 4;
  p.ks = {0, 4096, 0, 128};
  KernelConfig c = selectKGroupedConfig(p, h200);
  EXPECT_EQ(checkConfig(c, h200), "");
  double mixed = estimateKGroupedMakespanUs(p, c, h200);
  EXPECT_TRUE(std::isfinite(mixed));
  EXPECT_GT(mixed, 0.0);

  // Zero-K groups still write d = c: an all-zero problem costs its epilogues,
  // which is less than when the K work is there too.
  KGroupedProblem zeros = p;
  zeros.ks = {0, 0, 0, 0};
  KernelConfig z = selectKGroupedConfig(zeros, h200);
  EXPECT_EQ(checkConfig(z, h200), "");
  double epilogueOnly = estimateKGroupedMakespanUs(zeros, c, h200);
  EXPECT_GT(epilogueOnly, 0.0);
  EXPECT_LT(epilogueOnly, mixed);
}

TEST(Select, KsOverrideGroupCountAndExpectation) {
  Target h200;
  KGroupedProblem fromKs;
  fromKs.m = 1024;
  fromKs.n = 3072;
  fromKs.numGroups = 32; // ignored: ks is authoritative
  fromKs.expectedKPerGroup = 128;
  fromKs.ks = {2048, 2048};
  KGroupedProblem uniform = uniformProblem(2, 1024, 3072, 2048);
  KernelConfig c = validConfig();
  EXPECT_EQ(estimateKGroupedMakespanUs(fromKs, c, h200),
            estimateKGroupedMakespanUs(uniform, c, h200));
  EXPECT_EQ(selectKGroupedConfig(fromKs, h200),
            selectKGroupedConfig(uniform, h200));
}

TEST(Select, UnknownKAssumes4096) {
  Target h200;
  KernelConfig c = validConfig();
  EXPECT_EQ(
      estimateKGroupedMakespanUs(uniformProblem(8, 4096, 4096, 0), c, h200),
      estimateKGroupedMakespanUs(uniformProblem(8, 4096, 4096, 4096), c, h200));
}

TEST(Select, SmallMUsesOneMathWarpgroup) {
  // M = 64: a 128-row tile would be half padding.
  KernelConfig c =
      selectKGroupedConfig(uniformProblem(1, 64, 2048, 4096), Target());
  EXPECT_EQ(c.blockM, 64);
  EXPECT_EQ(c.mathWarpgroups, 1);
  EXPECT_EQ(c.threads(), 256);
}

TEST(Select, PicksTheModelledBest) {
  // Whatever is chosen for groups of more than 16 K blocks (shorter ones
  // narrow the tile, below) is within the tie tolerance (1%) of every
  // candidate.
  Target h200;
  for (KGroupedProblem p :
       {uniformProblem(4, 4096, 7168, 8192), uniformProblem(3, 768, 1536, 1536),
        uniformProblem(64, 256, 7168, 2176)}) {
    KernelConfig chosen = selectKGroupedConfig(p, h200);
    double chosenUs = estimateKGroupedMakespanUs(p, chosen, h200);
    EXPECT_NE(chosen.blockM, 192) << "three warpgroups are never selected";
    for (const KernelConfig &c : candidateKGroupedConfigs(h200))
      if (c.blockM != 192) // not part of the selection
        EXPECT_LE(chosenUs, 1.01 * estimateKGroupedMakespanUs(p, c, h200))
            << chosen.entryName() << " vs " << c.entryName();
  }
}

} // namespace

namespace {

TEST(Select, NarrowTilesForShortGroups) {
  Target h200;
  // Groups of 1-6 K blocks: 64 columns, whatever the model prefers; the
  // other decisions as usual (here CTA pairs: N >= 4096, 32 m-blocks).
  KernelConfig c =
      selectKGroupedConfig(uniformProblem(16, 4096, 4096, 512), h200);
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn64_s8_r2_c2x1_q");
  EXPECT_EQ(
      selectKGroupedConfig(uniformProblem(4, 4096, 7168, 768), h200).blockN,
      64);
  // 7-8 blocks: at most 128 columns.
  EXPECT_EQ(selectKGroupedConfig(uniformProblem(8, 4096, 2048, 1024), h200)
                .entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_q");
  EXPECT_EQ(
      selectKGroupedConfig(uniformProblem(8, 4096, 2048, 896), h200).blockN,
      128);
  EXPECT_EQ(selectKGroupedConfig(uniformProblem(8, 4096, 4096, 1408), h200)
                .entryName(),
            "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2_c2x1_q");
  // 9-16 blocks: at most 128 columns too (by modelled time, below); longer
  // groups keep the model's width.
  for (auto [k, blockN] : {std::pair<int64_t, int>{1152, 128},
                           {1536, 128},
                           {2048, 128},
                           {2176, 192}})
    EXPECT_EQ(
        selectKGroupedConfig(uniformProblem(8, 4096, 2048, k), h200).blockN,
        blockN)
        << "K " << k;
  // Half of the blocks in groups of at most 6 blocks narrows to 64; less,
  // with half of the modelled time in groups of at most 16 blocks, to 128;
  // less again not at all.
  KGroupedProblem p = uniformProblem(4, 4096, 2048, 0);
  p.ks = {768, 768, 1536, 0}; // 12 of 24
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 64);
  p.ks = {768, 1024, 1024, 0}; // 6 of 22, all 22 of at most 8
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 128);
  p.ks = {1024, 1024, 2048, 0}; // 16 of 32 of at most 8: exactly half
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 128);
  p.ks = {768, 1024, 2048, 0}; // all of at most 16
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 128);
  p.ks = {768, 1024, 3072, 0}; // 6 + 8 beside 24: 48% of the time
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 192);
  p.ks = {768, 1024, 2560, 0}; // 6 + 8 beside 20: 52%
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 128);
  p.ks = {768, 4096, 4096, 4096}; // 6 beside 32s: 11%
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 192);
  p.ks = {1152, 1408, 2048, 0}; // 20 of 36 of at most 11
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 128);
  // Not where 64 columns would pad N more (260 columns: 320 against the
  // model's 288; 2160: 2176 against none), and not for one-warpgroup tiles.
  EXPECT_EQ(
      selectKGroupedConfig(uniformProblem(3, 2048, 260, 256), h200).entryName(),
      "dgemm_kgrouped_fp8_1d1d_bm128_bn144_s6_r2");
  EXPECT_EQ(
      selectKGroupedConfig(uniformProblem(3, 2048, 2160, 256), h200).blockN,
      144);
  EXPECT_EQ(
      selectKGroupedConfig(uniformProblem(3, 4096, 260, 256), h200).entryName(),
      "dgemm_kgrouped_fp8_1d1d_bm64_bn144_s8_r2");
  // M = 64: the model's one-warpgroup tile stays (a 128-row one would be
  // half padding), though 64 columns would pad N = 2304 no more.
  KernelConfig small =
      selectKGroupedConfig(uniformProblem(4, 64, 2304, 256), h200);
  EXPECT_EQ(small.blockM, 64);
  EXPECT_NE(small.blockN, 64) << small.entryName();
}

TEST(Select, ReductionEpilogueOnlyInPlaceWithShortGroups) {
  Target h200;
  // The seed shape: 4 groups of 1 or 2 K blocks. In place too, it keeps the
  // register epilogue (loading c, which is d): the same kernel as with a
  // separate c.
  KGroupedProblem seed;
  seed.m = 2048;
  seed.n = 2048;
  seed.numGroups = 4;
  seed.ks = {256, 128, 128, 256};
  KernelConfig separate = selectKGroupedConfig(seed, h200);
  EXPECT_EQ(separate.redMaxBlocks, 0);
  seed.inPlace = true;
  EXPECT_EQ(selectKGroupedConfig(seed, h200), separate);
  // Groups of 8 blocks reduce; only the epilogue differs from the call with
  // a separate c.
  seed.ks = {1024, 1024, 1024, 1024};
  KernelConfig reducing = selectKGroupedConfig(seed, h200);
  EXPECT_EQ(reducing.redMaxBlocks, kRedEpilogueTileBlocks);
  EXPECT_EQ(reducing.epilogue, Epilogue::Reduction);
  separate = reducing;
  separate.epilogue = Epilogue::Register;
  separate.redMaxBlocks = 0;
  seed.inPlace = false;
  EXPECT_EQ(selectKGroupedConfig(seed, h200), separate);

  // The register epilogue needs groups of up to 6 padded blocks to hold at
  // least half of all blocks.
  KGroupedProblem p = uniformProblem(4, 4096, 4096, 768);
  p.inPlace = true;
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  p.ks = {768, 768, 640, 1024}; // 6 + 6 + 5 short, 8 not: 17 of 25
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  p.ks = {768, 768, 1536, 0}; // 12 of 24: exactly half
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  p.ks = {768, 768, 1024, 1024}; // 12 of 28: the reductions
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, kRedEpilogueTileBlocks);
  p.ks = {768, 0, 0, 769}; // 6 of 13 (the padded 7): the reductions
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, kRedEpilogueTileBlocks);
  p.ks = {768, 0, 0, 768}; // 12 of 12
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  p.ks = {768, 0, 4096, 0}; // 6 of 38, but the 6-block tile costs the
  // park as much as a 12-block one: the register epilogue (registerBeatsPark)
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  p.ks = {768, 0, 12288, 0}; // 6 against 96: the in-place kernel
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 1);

  // Groups of up to 8 padded blocks (their tiles reduce) must hold at least
  // as many blocks as the longer ones.
  p = uniformProblem(4, 4096, 4096, 1024);
  p.inPlace = true;
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, kRedEpilogueTileBlocks);
  p.ks = {1024, 1024, 1024, 1025}; // 8 + 8 + 8 short, 9 long
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, kRedEpilogueTileBlocks);
  p.ks = {1024, 128, 1152, 0}; // 8 + 1 short, 9 long: a tie reduces
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, kRedEpilogueTileBlocks);
  // Else the register epilogue again where its modelled time beats the
  // park's (registerBeatsPark).
  p.ks = {1024, 0, 1152, 0}; // 8 + 9 of 17
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  p.ks = {1024, 0, 1536, 0}; // 8 short, 12 long
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  p = uniformProblem(8, 4096, 4096, 128 * kRegisterOverParkMaxBlocks);
  p.inPlace = true;
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  EXPECT_EQ(parked(selectKGroupedConfig(p, h200)), 0);
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 128);
  EXPECT_EQ(selectKGroupedConfig(p, h200).clusterM, 2); // as with a separate c
  // 11 + 11 + 12 blocks: even within the margin, so the park.
  p.ks = {1408, 1408, 1536, 0, 0, 0, 0, 0};
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 1);
  p.ks = {1408, 1408, 1536, 1536, 0, 0, 0, 0};
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 1);
  p = uniformProblem(8, 4096, 4096, 128 * (kRegisterOverParkMaxBlocks + 1));
  p.inPlace = true;
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 1);
  EXPECT_EQ(parked(selectKGroupedConfig(p, h200)), 1);
  // Groups of two lengths, as measured (bench/NOTES.md section 24): short
  // groups holding 11% of the blocks (8 of 2 blocks beside 8 of 16) make
  // the register epilogue faster; 4% (4 of 2 beside 12 of 16) do not.
  p = uniformProblem(16, 4096, 4096, 2048);
  p.inPlace = true;
  p.ks.assign(16, 2048);
  std::fill(p.ks.begin(), p.ks.begin() + 8, 256);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(selectKGroupedConfig(p, h200).blockN, 128);
  std::fill(p.ks.begin() + 4, p.ks.begin() + 8, 2048);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 1);
  EXPECT_EQ(parked(selectKGroupedConfig(p, h200)), 1);
  p = uniformProblem(16, 4096, 4096, 3072); // 12 of 4 beside 4 of 24
  p.inPlace = true;
  p.ks.assign(16, 3072);
  std::fill(p.ks.begin(), p.ks.begin() + 12, 512);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 0);
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  p = uniformProblem(4, 4096, 4096, 1024);
  p.inPlace = true;
  p.ks = {0, 0, 0, 0}; // nothing to reduce
  EXPECT_EQ(selectKGroupedConfig(p, h200).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(selectKGroupedConfig(p, h200)), 1);
  // The large shapes: the in-place kernel in place, the register
  // epilogue with a separate c; the tile is the same, and the in-place
  // kernel never multicasts (N = 7168, an even m-block count).
  KGroupedProblem wide = uniformProblem(4, 4096, 7168, 8192);
  wide.inPlace = true;
  KernelConfig wideInPlace = selectKGroupedConfig(wide, h200);
  EXPECT_EQ(inPlaceKernel(wideInPlace), 1);
  EXPECT_EQ(wideInPlace.clusterM, 1);
  wide.inPlace = false;
  EXPECT_EQ(selectKGroupedConfig(wide, h200).clusterM, 2);
  KGroupedProblem large = uniformProblem(4, 7168, 2048, 8192);
  large.inPlace = true;
  KernelConfig inPlace = selectKGroupedConfig(large, h200);
  EXPECT_EQ(inPlace.redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(inPlace), 1);
  EXPECT_EQ(parked(inPlace), 0);
  large.inPlace = false;
  KernelConfig separateLarge = selectKGroupedConfig(large, h200);
  EXPECT_EQ(inPlaceKernel(separateLarge), 0);
  EXPECT_EQ(separateLarge.quadB, 1);
  EXPECT_EQ(inPlace.quadB, 0);
  separateLarge.epilogue = Epilogue::InPlace;
  separateLarge.quadB = 0;
  EXPECT_EQ(separateLarge, inPlace);
  // The reduction kernel for short groups is never an in-place kernel.
  EXPECT_EQ(inPlaceKernel(reducing), 0);
}

TEST(Calibration, FollowsTheMemoryBandwidth) {
  Target target;
  EXPECT_EQ(calibrationFor(target), Calibration::H100); // unknown
  target.memoryBandwidthGBps = 3352;                    // H100 SXM
  EXPECT_EQ(calibrationFor(target), Calibration::H100);
  target.memoryBandwidthGBps = kH200MinBandwidthGBps - 1;
  EXPECT_EQ(calibrationFor(target), Calibration::H100);
  target.memoryBandwidthGBps = kH200MinBandwidthGBps;
  EXPECT_EQ(calibrationFor(target), Calibration::H200);
  target.memoryBandwidthGBps = 4800; // H200
  EXPECT_EQ(calibrationFor(target), Calibration::H200);
  EXPECT_STREQ(calibrationName(Calibration::H100), "H100");
  EXPECT_STREQ(calibrationName(Calibration::H200), "H200");
}

TEST(Select, H200CurvesAreOrderedAsMeasured) {
  const Calibration h200 = Calibration::H200;
  for (InPlaceEpilogue e :
       {InPlaceEpilogue::Register, InPlaceEpilogue::Reduction,
        InPlaceEpilogue::Parked}) {
    EXPECT_EQ(inPlaceTileTime(0, e, h200), 0);
    for (int64_t blocks = 1; blocks < 64; ++blocks)
      EXPECT_LE(inPlaceTileTime(blocks, e, h200),
                inPlaceTileTime(blocks + 1, e, h200))
          << int(e) << " " << blocks;
  }
  auto t = [&](int64_t blocks, InPlaceEpilogue e) {
    return inPlaceTileTime(blocks, e, h200);
  };
  // The register epilogue is fastest at 1-2 blocks, the reductions at 4,
  // the park from 8 blocks on; long tiles (the reduction kernel's register
  // path) are 2.4% slower in the reduction kernel.
  for (int64_t blocks : {1, 2}) {
    EXPECT_LT(t(blocks, InPlaceEpilogue::Register),
              t(blocks, InPlaceEpilogue::Reduction));
    EXPECT_LT(t(blocks, InPlaceEpilogue::Register),
              t(blocks, InPlaceEpilogue::Parked));
  }
  EXPECT_LT(t(4, InPlaceEpilogue::Reduction), t(4, InPlaceEpilogue::Register));
  for (int64_t blocks : {8, 9, 12, 16, 32, 64, 256})
    EXPECT_LT(t(blocks, InPlaceEpilogue::Parked),
              t(blocks, InPlaceEpilogue::Register))
        << blocks;
  EXPECT_DOUBLE_EQ(t(16, InPlaceEpilogue::Reduction),
                   1.024 * t(16, InPlaceEpilogue::Register));
  // The H100 calibration is the two-curve model (no reduction curve).
  for (int64_t blocks : {1, 8, 12, 40}) {
    EXPECT_EQ(
        inPlaceTileTime(blocks, InPlaceEpilogue::Parked, Calibration::H100),
        inPlaceTileTime(blocks, true));
    EXPECT_EQ(
        inPlaceTileTime(blocks, InPlaceEpilogue::Reduction, Calibration::H100),
        inPlaceTileTime(blocks, false));
  }
  EXPECT_EQ(fastestInPlaceEpilogueH200({}), InPlaceEpilogue::Parked);
  EXPECT_EQ(fastestInPlaceEpilogueH200({0, 0}), InPlaceEpilogue::Parked);
}

TEST(Select, H200CalibrationFollowsItsSweep) {
  // The choices the H200 sweep measured fastest (bench/NOTES.md section
  // 26), against the H100 calibration's on the same problems.
  Target h200, h100;
  h200.memoryBandwidthGBps = 4800;
  h100.memoryBandwidthGBps = 3352;
  auto select = [](KGroupedProblem p, bool inPlace, const Target &target) {
    p.inPlace = inPlace;
    return selectKGroupedConfig(p, target);
  };
  auto twoLengths = [](int groups, int64_t m, int64_t n, int shortGroups,
                       int64_t shortBlocks, int64_t longBlocks) {
    KGroupedProblem p = uniformProblem(groups, m, n, longBlocks * 128);
    p.ks.assign(groups, longBlocks * 128);
    std::fill(p.ks.begin(), p.ks.begin() + shortGroups, shortBlocks * 128);
    return p;
  };
  // 64 columns only for groups of 1-2 blocks; at 4-6 blocks 128 columns
  // (6-9% faster there), in place and with a separate c.
  KGroupedProblem seed = uniformProblem(4, 2048, 2048, 256);
  seed.ks = {256, 128, 128, 256};
  for (bool inPlace : {false, true}) {
    EXPECT_EQ(select(seed, inPlace, h200).blockN, 64);
    EXPECT_EQ(select(seed, inPlace, h200).redMaxBlocks, 0);
    EXPECT_EQ(select(uniformProblem(32, 4096, 2048, 256), inPlace, h200).blockN,
              64);
    for (auto [g, m, n, k] :
         {std::tuple<int, int64_t, int64_t, int64_t>{16, 4096, 4096, 512},
          {4, 4096, 4096, 640},
          {16, 7168, 2048, 768}}) {
      KGroupedProblem p = uniformProblem(g, m, n, k);
      EXPECT_EQ(select(p, inPlace, h100).blockN, 64) << g << " " << k;
      EXPECT_EQ(select(p, inPlace, h200).blockN, 128) << g << " " << k;
    }
  }
  // In place, uniform groups of 8-11 blocks: the park on the H200 (7-13%
  // faster than the register epilogue), the register epilogue on the H100.
  for (int64_t blocks : {8, 9, 10, 11}) {
    KGroupedProblem p = uniformProblem(8, 4096, 4096, blocks * 128);
    KernelConfig onH200 = select(p, true, h200);
    EXPECT_EQ(inPlaceKernel(onH200), 1) << blocks;
    EXPECT_EQ(parked(onH200), 1) << blocks;
    EXPECT_EQ(onH200.blockN, 128) << blocks;
    if (blocks > 8)
      EXPECT_EQ(inPlaceKernel(select(p, true, h100)), 0) << blocks;
  }
  // Groups of two lengths.
  struct Mix {
    int groups;
    int64_t m, n;
    int shortGroups;
    int64_t shortBlocks, longBlocks;
    InPlaceEpilogue fastest;
  };
  for (const Mix &mix :
       {Mix{16, 4096, 4096, 12, 2, 16, InPlaceEpilogue::Register},
        Mix{16, 4096, 4096, 14, 2, 16, InPlaceEpilogue::Register},
        Mix{16, 4096, 4096, 4, 2, 16, InPlaceEpilogue::Parked},
        Mix{16, 4096, 4096, 12, 4, 24, InPlaceEpilogue::Register},
        Mix{16, 4096, 4096, 8, 4, 24, InPlaceEpilogue::Parked},
        Mix{16, 4096, 4096, 12, 4, 16, InPlaceEpilogue::Reduction},
        Mix{16, 4096, 4096, 10, 6, 12, InPlaceEpilogue::Parked},
        Mix{16, 4096, 4096, 12, 8, 16, InPlaceEpilogue::Parked},
        Mix{8, 4096, 4096, 4, 8, 32, InPlaceEpilogue::Parked},
        Mix{8, 4096, 4096, 4, 7, 9, InPlaceEpilogue::Parked},
        Mix{16, 7168, 2048, 12, 8, 24, InPlaceEpilogue::Parked},
        Mix{32, 4096, 2048, 24, 2, 10, InPlaceEpilogue::Register}}) {
    KGroupedProblem p = twoLengths(mix.groups, mix.m, mix.n, mix.shortGroups,
                                   mix.shortBlocks, mix.longBlocks);
    KernelConfig c = select(p, true, h200);
    std::string what = std::to_string(mix.shortGroups) + " x " +
                       std::to_string(mix.shortBlocks) + " blocks beside " +
                       std::to_string(mix.longBlocks);
    EXPECT_EQ(fastestInPlaceEpilogueH200(p.ks), mix.fastest) << what;
    EXPECT_EQ(inPlaceKernel(c), mix.fastest == InPlaceEpilogue::Parked) << what;
    EXPECT_EQ(parked(c), mix.fastest == InPlaceEpilogue::Parked) << what;
    EXPECT_EQ(c.redMaxBlocks, mix.fastest == InPlaceEpilogue::Reduction
                                  ? kRedEpilogueTileBlocks
                                  : 0)
        << what;
    EXPECT_EQ(c.blockN, 128) << what;
  }
  // The shapes choose the same kernels on both calibrations.
  for (auto [g, m, n, k] :
       {std::tuple<int, int64_t, int64_t, int64_t>{4, 4096, 7168, 8192},
        {4, 7168, 2048, 8192},
        {8, 4096, 7168, 4096},
        {8, 7168, 2048, 4096},
        {16, 4096, 7168, 2048},
        {16, 7168, 2048, 2048}})
    for (bool inPlace : {false, true}) {
      KGroupedProblem p = uniformProblem(g, m, n, k);
      EXPECT_EQ(select(p, inPlace, h200), select(p, inPlace, h100))
          << g << " " << m << "x" << n << " in place " << inPlace;
    }
  EXPECT_EQ(select(seed, true, h200), select(seed, true, h100));
}

TEST(Select, InPlaceTileTimesFollowTheMeasuredCrossovers) {
  // Empty tiles cost nothing in either kernel; times grow with the blocks.
  EXPECT_EQ(inPlaceTileTime(0, false), 0);
  EXPECT_EQ(inPlaceTileTime(0, true), 0);
  for (int64_t blocks = 1; blocks < 64; ++blocks) {
    EXPECT_LE(inPlaceTileTime(blocks, false),
              inPlaceTileTime(blocks + 1, false));
    EXPECT_LE(inPlaceTileTime(blocks, true), inPlaceTileTime(blocks + 1, true));
  }
  // Uniform groups: the register epilogue up to 11 blocks, the park from 12
  // (bench/NOTES.md section 23), and still the park far out.
  auto uniform = [](int64_t groups, int64_t blocks) {
    return std::vector<int64_t>(groups, blocks * 128);
  };
  for (int64_t blocks = 1; blocks <= kRegisterOverParkMaxBlocks; ++blocks)
    EXPECT_TRUE(registerBeatsPark(uniform(8, blocks))) << blocks;
  for (int64_t blocks : {12, 16, 24, 32, 64, 256})
    EXPECT_FALSE(registerBeatsPark(uniform(8, blocks))) << blocks;
  EXPECT_FALSE(registerBeatsPark({}));
  EXPECT_FALSE(registerBeatsPark({0, 0, 0}));
  // An empty group changes nothing; K is padded to whole blocks.
  EXPECT_EQ(registerBeatsPark({1152, 0, 2048}),
            registerBeatsPark({1152, 2048}));
  EXPECT_EQ(registerBeatsPark({1409}), registerBeatsPark({1536}));
}

TEST(Select, ParksTilesOfShortGroupsInPlace) {
  Target h200;
  auto select = [&](KGroupedProblem p) {
    p.inPlace = true;
    return selectKGroupedConfig(p, h200);
  };
  // bench.py's 16- and 8-group shapes: the parked 128-column kernel.
  for (auto [g, m, n, k] :
       {std::tuple<int, int64_t, int64_t, int64_t>{16, 4096, 7168, 2048},
        {16, 7168, 2048, 2048},
        {8, 4096, 7168, 4096},
        {8, 7168, 2048, 4096}}) {
    KernelConfig c = select(uniformProblem(g, m, n, k));
    SCOPED_TRACE(c.entryName());
    EXPECT_EQ(c.entryName(),
              "dgemm_kgrouped_fp8_1d1d_bm128_bn128_s4_r2_ip_park");
    EXPECT_EQ(checkConfig(c, h200), "");
  }
  // Mean K at most kParkMaxMeanBlocks blocks (each K rounded up to 128).
  KGroupedProblem p = uniformProblem(4, 4096, 7168, 128 * kParkMaxMeanBlocks);
  EXPECT_EQ(parked(select(p)), 1);
  p.ks = {6144, 6144, 6144, 6145};
  EXPECT_EQ(parked(select(p)), 0);
  p.ks = {12288, 0, 12288, 0}; // mean 48 blocks, two empty groups
  EXPECT_EQ(parked(select(p)), 1);
  // bench.py's 4-group shapes (mean K 8192): the 192-column in-place kernel.
  KernelConfig wide = select(uniformProblem(4, 4096, 7168, 8192));
  EXPECT_EQ(parked(wide), 0);
  EXPECT_EQ(inPlaceKernel(wide), 1);
  // At least two tiles per SM: 2 x 2 x 16 = 64 tiles are too few.
  EXPECT_EQ(parked(select(uniformProblem(16, 256, 256, 2048))), 0);
  EXPECT_EQ(parked(select(uniformProblem(16, 2048, 1024, 2048))), 1);
  // Never without the in-place kernel: a separate c, or the reduction
  // kernel's short groups.
  EXPECT_EQ(
      parked(selectKGroupedConfig(uniformProblem(16, 4096, 7168, 2048), h200)),
      0);
  KGroupedProblem seed;
  seed.m = 2048;
  seed.n = 2048;
  seed.numGroups = 4;
  seed.ks = {256, 128, 128, 256};
  EXPECT_EQ(parked(select(seed)), 0);
  EXPECT_EQ(select(seed).redMaxBlocks, 0);
  EXPECT_EQ(inPlaceKernel(select(seed)), 0);
}

TEST(RasterBand, BandsOnlyWhereAGroupsBOutgrowsTheL2) {
  auto problem = [](int64_t m, int64_t n, std::vector<int64_t> ks) {
    KGroupedProblem p;
    p.m = m;
    p.n = n;
    p.numGroups = int(ks.size());
    p.ks = std::move(ks);
    p.inPlace = true;
    return p;
  };
  // The benchmark's wide shapes with 4 and 8 groups: 61 and 32 MB of B per
  // group.
  EXPECT_EQ(selectRasterBand(problem(4096, 7168, {8192, 8576, 8704, 8832})), 8);
  EXPECT_EQ(
      selectRasterBand(problem(4096, 7168, std::vector<int64_t>(8, 4480))), 8);
  // 16 groups of the same width (15 MB), the narrow shapes, the seed.
  EXPECT_EQ(
      selectRasterBand(problem(4096, 7168, std::vector<int64_t>(16, 2176))), 0);
  EXPECT_EQ(selectRasterBand(problem(7168, 2048, {8192, 8192, 8192, 8320})), 0);
  EXPECT_EQ(selectRasterBand(problem(2048, 2048, {256, 128, 128, 256})), 0);
  // The threshold is 24 MiB of mean B per group; empty groups count.
  EXPECT_EQ(selectRasterBand(problem(1024, 8192, {3072})), 8);
  EXPECT_EQ(selectRasterBand(problem(1024, 8192, {3072 - 128})), 0);
  EXPECT_EQ(selectRasterBand(problem(1024, 8192, {6144, 0})), 8);
  EXPECT_EQ(selectRasterBand(problem(1024, 8192, {6016, 0})), 0);
  // Without per-group K the expectation stands in.
  KGroupedProblem expected;
  expected.m = 4096;
  expected.n = 7168;
  expected.numGroups = 4;
  expected.expectedKPerGroup = 8192;
  EXPECT_EQ(selectRasterBand(expected), 8);
}

//===----------------------------------------------------------------------===//
// Overrides
//===----------------------------------------------------------------------===//

KGroupedProblem listedProblem(int64_t m, int64_t n, std::vector<int64_t> ks,
                              bool inPlace) {
  KGroupedProblem p;
  p.m = m;
  p.n = n;
  p.numGroups = int(ks.size());
  p.ks = std::move(ks);
  p.inPlace = inPlace;
  return p;
}

/// selectKGroupedConfig's choice for `problem` with `overrides` applied.
std::string chosenWith(const KGroupedProblem &problem,
                       const ConfigOverrides &overrides,
                       const Target &target = Target()) {
  KernelConfig c = selectKGroupedConfig(problem, target);
  std::string why = applyOverrides(c, overrides, target, &problem);
  EXPECT_EQ(why, "");
  EXPECT_EQ(checkConfig(c, target), "") << c.entryName();
  std::string name = c.entryName();
  return name.substr(name.find("_bm") + 1);
}

TEST(ApplyOverrides, NoneKeepTheChoice) {
  for (bool inPlace : {false, true})
    for (int64_t k : {128, 1024, 2048, 8192}) {
      KGroupedProblem p = uniformProblem(8, 4096, 7168, k);
      p.inPlace = inPlace;
      KernelConfig chosen = selectKGroupedConfig(p, Target());
      KernelConfig c = chosen;
      EXPECT_EQ(applyOverrides(c, ConfigOverrides(), Target(), &p), "");
      EXPECT_EQ(c, chosen);
    }
}

TEST(ApplyOverrides, EpilogueAndPark) {
  // 16 groups of 2048 in place: the heuristics park 128-column tiles.
  KGroupedProblem p =
      listedProblem(4096, 7168, std::vector<int64_t>(16, 2048), true);
  ConfigOverrides o;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s4_r2_ip_park");
  // The in-place kernel of the same tile, with the stages that fit without
  // the park; stages apply to the kernel the epilogue leaves.
  o.epilogue = Epilogue::InPlace;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s6_r2_ip");
  o.stages = 3;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s3_r2_ip");
  o.epilogue = Epilogue::Parked;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s3_r2_ip_park");
  o.stages.reset();
  // Parked also where the heuristics chose the unparked 192-column kernel
  // (3 stages fit beside the park) ...
  KGroupedProblem long4 =
      listedProblem(4096, 7168, {8192, 8192, 8192, 8192}, true);
  EXPECT_EQ(chosenWith(long4, o), "bm128_bn192_s3_r2_ip_park");
  // ... but not where the tile cannot park (144 columns), nor out of place
  // (a separate c has only the register epilogue).
  o.blockN = 144;
  EXPECT_EQ(chosenWith(long4, o), "bm128_bn144_s6_r2_ip");
  o.blockN.reset();
  long4.inPlace = false;
  EXPECT_EQ(chosenWith(long4, o), "bm128_bn192_s5_r2_c2x1_q");
  // The other epilogues, with the stages that fit and quad-ordered B.
  o.epilogue = Epilogue::Register;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s6_r2_q");
  o.epilogue = Epilogue::Reduction;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s6_r2_red8_q");
  o.redMaxBlocks = 16;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s6_r2_red16_q");
  // red_max_blocks alone: the reduction epilogue with that bound, or the
  // register epilogue for 0.
  o.epilogue.reset();
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s6_r2_red16_q");
  o.redMaxBlocks = 0;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s6_r2_q");
}

TEST(ApplyOverrides, TileOverridesClearTheParkWhereItCannotStay) {
  KGroupedProblem p =
      listedProblem(4096, 7168, std::vector<int64_t>(16, 2048), true);
  ConfigOverrides o;
  o.blockN = 144;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn144_s6_r2_ip");
  o.blockN = 192;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s3_r2_ip_park");
  o.blockN.reset();
  o.blockM = 192;
  EXPECT_EQ(chosenWith(p, o), "bm192_bn128_s5_r2_ip");
  o.blockM.reset();
  // CTA pairs: the paired in-place kernel (a cluster-m=2 bundle holds it).
  o.clusterM = 2;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn128_s6_r2_c2x1_ip");
}

TEST(ApplyOverrides, InPlaceEpilogueDropsTheHeuristicsPair) {
  // 16 groups of 512 into 4096 x 4096 in place: the heuristics pair the
  // CTAs of their (not in-place) kernel.
  KGroupedProblem p =
      listedProblem(4096, 4096, std::vector<int64_t>(16, 512), true);
  KernelConfig chosen = selectKGroupedConfig(p, Target());
  ASSERT_EQ(chosen.clusterM, 2);
  ConfigOverrides o;
  o.epilogue = Epilogue::InPlace;
  KernelConfig c = chosen;
  ASSERT_EQ(applyOverrides(c, o, Target(), &p), "");
  EXPECT_EQ(c.epilogue, Epilogue::InPlace);
  EXPECT_EQ(c.clusterM, 1);
  // ... unless pairs were asked for too.
  o.clusterM = 2;
  c = chosen;
  ASSERT_EQ(applyOverrides(c, o, Target(), &p), "");
  EXPECT_EQ(c.epilogue, Epilogue::InPlace);
  EXPECT_EQ(c.clusterM, 2);
  EXPECT_EQ(checkConfig(c, Target()), "");
}

TEST(ApplyOverrides, BlockMAndStages) {
  KGroupedProblem p =
      listedProblem(4096, 7168, {8192, 8192, 8192, 8192}, false);
  EXPECT_EQ(chosenWith(p, {}), "bm128_bn192_s5_r2_c2x1_q");
  ConfigOverrides o;
  // 192 rows at the chosen 192 columns do not exist: ignored.
  o.blockM = 192;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s5_r2_c2x1_q");
  // With 128 columns: the three-warpgroup kernel, never paired.
  o.blockN = 128;
  EXPECT_EQ(chosenWith(p, o), "bm192_bn128_s5_r2_q");
  // 64 rows keep the pair where the m-block count stays even ...
  o.blockM = 64;
  o.blockN.reset();
  EXPECT_EQ(chosenWith(p, o), "bm64_bn192_s6_r2_c2x1_q");
  // ... and drop it where the count is odd (4160 rows: 65 blocks of 64).
  KGroupedProblem odd =
      listedProblem(4160, 7168, {8192, 8192, 8192, 8192}, false);
  o.blockM = 64;
  KernelConfig c = selectKGroupedConfig(odd, Target());
  c.clusterM = 2; // as if paired
  ASSERT_EQ(applyOverrides(c, o, Target(), &odd), "");
  EXPECT_EQ(c.clusterM, 1);
  // Fewer stages than fit; more are ignored.
  o = ConfigOverrides();
  o.stages = 3;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s3_r2_c2x1_q");
  o.stages = 6;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s5_r2_c2x1_q");
  // Descriptor slots replace the field.
  o = ConfigOverrides();
  o.descSlots = 1;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s5_r1_c2x1_q");
}

TEST(ApplyOverrides, QuadBFallsBackToTheNaturalTwin) {
  KGroupedProblem p =
      listedProblem(4096, 7168, {8192, 8192, 8192, 8192}, false);
  ConfigOverrides o;
  o.quadB = 0;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s5_r2_c2x1");
  o.quadB = 1;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s5_r2_c2x1_q");
  // Quad order needs N % 16 == 0, and is never built for the in-place
  // kernel: B in order there.
  KGroupedProblem ragged =
      listedProblem(4096, 7160, {8192, 8192, 8192, 8192}, false);
  EXPECT_EQ(chosenWith(ragged, o).find("_q"), std::string::npos);
  p.inPlace = true;
  EXPECT_EQ(chosenWith(p, o), "bm128_bn192_s5_r2_ip");
  // Without a problem (bundle candidates) a config keeps its own quad order
  // where it still can: the paired 144-column tile cannot.
  KernelConfig quad = validConfig();
  quad.blockN = 144;
  quad.stages = maxStages(128, 144, Target());
  quad.quadB = 1;
  ConfigOverrides pairs;
  pairs.clusterM = 2;
  KernelConfig c = quad;
  ASSERT_EQ(applyOverrides(c, pairs, Target(), nullptr), "");
  EXPECT_EQ(c.entryName(), "dgemm_kgrouped_fp8_1d1d_bm128_bn144_s6_r2_c2x1");
  c = quad;
  ASSERT_EQ(applyOverrides(c, ConfigOverrides(), Target(), nullptr), "");
  EXPECT_EQ(c, quad);
}

TEST(ApplyOverrides, BundleCandidatesStayCandidates) {
  // The bundle writer's use: every candidate with desc_slots and cluster_m
  // overridden is a valid kernel; parked ones that cannot stay parked
  // become their in-place twin (a duplicate the writer drops).
  std::vector<KernelConfig> candidates = candidateKGroupedConfigs(Target());
  ConfigOverrides o;
  o.descSlots = 1;
  o.clusterM = 2;
  o.unsafe = unsigned(Unsafe::SkipDescriptorDrain);
  std::set<std::string> names;
  for (KernelConfig c : candidates) {
    bool wasParked = parked(c);
    bool threeWarpgroups = c.blockM == 192;
    ASSERT_EQ(applyOverrides(c, o, Target(), nullptr), "");
    EXPECT_EQ(c.descSlots, 1);
    EXPECT_EQ(c.clusterM, 2);
    EXPECT_EQ(c.unsafe, unsigned(Unsafe::SkipDescriptorDrain));
    EXPECT_EQ(parked(c), 0);
    if (wasParked)
      EXPECT_EQ(c.epilogue, Epilogue::InPlace);
    // The pair is invalid only with three math warpgroups, as before.
    EXPECT_EQ(checkConfig(c, Target()).empty(), !threeWarpgroups)
        << c.entryName();
    names.insert(c.entryName());
  }
  EXPECT_LT(names.size(), candidates.size());
}

TEST(ApplyOverrides, RejectsValuesOutsideTheirRules) {
  struct Case {
    ConfigOverrides overrides;
    std::string message;
  };
  std::vector<Case> cases(11);
  cases[0].overrides.descSlots = 3;
  cases[0].message = "the desc_slots override must be 1 or 2, got 3";
  cases[1].overrides.clusterM = 0;
  cases[1].message = "the cluster_m override must be 1 or 2, got 0";
  cases[2].overrides.quadB = 2;
  cases[2].message = "the quad_b override must be 0 or 1, got 2";
  cases[3].overrides.blockM = 96;
  cases[3].message = "the block_m override must be 64, 128 or 192 (64 rows "
                     "per math warpgroup), got 96";
  cases[4].overrides.blockN = 264;
  cases[4].message = "the block_n override must be a multiple of 8 in [8, "
                     "256] (WGMMA N), got 264";
  cases[5].overrides.blockN = 100;
  cases[5].message = "the block_n override must be a multiple of 8 in [8, "
                     "256] (WGMMA N), got 100";
  cases[6].overrides.stages = 1;
  cases[6].message = "the stages override must be >= 2, got 1";
  cases[7].overrides.redMaxBlocks = -1;
  cases[7].message =
      "the red_max_blocks override must be in [0, 1048576], got -1";
  cases[8].overrides.epilogue = Epilogue::InPlace;
  cases[8].overrides.redMaxBlocks = 8;
  cases[8].message = "the red_max_blocks override must be 0 with the "
                     "epilogue override in_place (only the reduction "
                     "epilogue has a bound), got 8";
  cases[9].overrides.epilogue = Epilogue::Reduction;
  cases[9].overrides.redMaxBlocks = 0;
  cases[9].message = "the red_max_blocks override must be > 0 with the "
                     "epilogue override reduction, got 0";
  cases[10].overrides.unsafe = 4;
  cases[10].message = "the unsafe override must be a set of "
                      "skip_descriptor_drain (1) and skip_proxy_fence (2), "
                      "got 4";
  KGroupedProblem p = uniformProblem(4, 2048, 2048, 1024);
  p.inPlace = true;
  const KernelConfig chosen = selectKGroupedConfig(p, Target());
  for (const Case &c : cases) {
    EXPECT_EQ(checkOverrides(c.overrides), c.message);
    KernelConfig config = chosen;
    EXPECT_EQ(applyOverrides(config, c.overrides, Target(), &p), c.message);
    EXPECT_EQ(config, chosen) << "changed on error: " << c.message;
  }
  // Reduction without a bound takes the heuristics' bound.
  ConfigOverrides reduction;
  reduction.epilogue = Epilogue::Reduction;
  EXPECT_EQ(checkOverrides(reduction), "");
  KernelConfig c = chosen;
  ASSERT_EQ(applyOverrides(c, reduction, Target(), &p), "");
  EXPECT_EQ(c.redMaxBlocks, kRedEpilogueTileBlocks);
}

//===----------------------------------------------------------------------===//
// Sizes past what the kernel takes
//===----------------------------------------------------------------------===//

TEST(Overflow, CheckProblemNamesTheField) {
  KGroupedProblem p = uniformProblem(4, 2048, 2048, 1024);
  EXPECT_EQ(checkProblem(p), "");
  p.m = int64_t(1) << 62;
  EXPECT_EQ(checkProblem(p), "m must be in [0, 2147483647] (a 32-bit kernel "
                             "parameter), got 4611686018427387904");
  p.m = 2048;
  p.n = int64_t(1) << 40;
  EXPECT_EQ(checkProblem(p), "n must be in [0, 2147483647] (a 32-bit kernel "
                             "parameter), got 1099511627776");
  p.n = -1;
  EXPECT_NE(checkProblem(p).find("n must be in [0, 2147483647]"),
            std::string::npos);
  p.n = 2048;
  p.numGroups = -3;
  EXPECT_NE(checkProblem(p).find("numGroups must be"), std::string::npos);
  p.numGroups = 4;
  p.expectedKPerGroup = int64_t(1) << 31;
  EXPECT_NE(checkProblem(p).find("expectedKPerGroup must be <= 2147483647"),
            std::string::npos);
  p.expectedKPerGroup = 0;
  p.ks = {128, -128, int64_t(1) << 40};
  EXPECT_EQ(checkProblem(p), "ks[2] must be <= 2147483647 (a 32-bit kernel "
                             "parameter), got 1099511627776");
  p.ks = {128, -128, 2147483647}; // negative K counts as an empty group
  EXPECT_EQ(checkProblem(p), "");
}

TEST(Overflow, HugeProblemsGetTheFallbackWithoutAborting) {
  Target t;
  const KernelConfig first = candidateKGroupedConfigs(t).front();
  for (auto [m, n] : {std::pair<int64_t, int64_t>{int64_t(1) << 62, 4096},
                      {4096, int64_t(1) << 40},
                      {std::numeric_limits<int64_t>::max(),
                       std::numeric_limits<int64_t>::max()}}) {
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n));
    for (bool inPlace : {false, true}) {
      KGroupedProblem p = uniformProblem(2147483647, m, n, 2147483647);
      p.inPlace = inPlace;
      EXPECT_EQ(estimateKGroupedMakespanUs(p, first, t),
                std::numeric_limits<double>::infinity());
      EXPECT_EQ(selectKGroupedConfig(p, t), first);
      EXPECT_EQ(selectRasterBand(p), 0);
      // The overrides' m-block parity rule copes too.
      ConfigOverrides o;
      o.blockM = 64;
      KernelConfig c = first;
      EXPECT_EQ(applyOverrides(c, o, t, &p), "");
      EXPECT_EQ(checkConfig(c, t), "");
    }
  }
}

TEST(Overflow, LargestValidProblemIsModelledQuickly) {
  // 2^31 - 1 groups of the largest K into the largest output: 2^84 tiles
  // of 64 x 8, more than 64 bits count, and more groups than memory could
  // hold as a vector. The selection must neither overflow nor allocate per
  // group.
  const int64_t max = kMaxProblemExtent;
  KGroupedProblem p = uniformProblem(2147483647, max, max, max);
  Target t;
  const std::vector<KernelConfig> candidates = candidateKGroupedConfigs(t);
  auto start = std::chrono::steady_clock::now();
  for (bool inPlace : {false, true}) {
    p.inPlace = inPlace;
    KernelConfig c = selectKGroupedConfig(p, t);
    EXPECT_EQ(checkConfig(c, t), "") << c.entryName();
    EXPECT_NE(std::find(candidates.begin(), candidates.end(), c),
              candidates.end());
    double us = estimateKGroupedMakespanUs(p, c, t);
    EXPECT_TRUE(std::isfinite(us));
    EXPECT_GT(us, 0);
    EXPECT_EQ(selectRasterBand(p), 8);
  }
  KernelConfig tiny = validConfig();
  tiny.blockM = 64;
  tiny.mathWarpgroups = 1;
  tiny.blockN = 8;
  double us = estimateKGroupedMakespanUs(p, tiny, t);
  EXPECT_TRUE(std::isfinite(us));
  EXPECT_GT(us, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Overflow, UnmodelledConfigsAndTargets) {
  KGroupedProblem p = uniformProblem(4, 2048, 2048, 1024);
  KernelConfig c = validConfig();
  Target huge;
  huge.numSMs = std::numeric_limits<int>::max(); // no 16 GiB of CTAs
  EXPECT_EQ(estimateKGroupedMakespanUs(p, c, huge),
            std::numeric_limits<double>::infinity());
  c.blockN = 0; // no division by zero
  EXPECT_EQ(estimateKGroupedMakespanUs(p, c, Target()),
            std::numeric_limits<double>::infinity());
}

TEST(Overflow, MergedGroupsMatchGroupByGroup) {
  // Uniform groups are modelled as one run; the same groups listed one by
  // one take the per-group path. Both must agree (to rounding).
  Target t;
  t.numSMs = 9;
  for (int groups : {1, 7, 9, 40}) {
    KGroupedProblem uniform = uniformProblem(groups, 15 * 128, 128, 1000);
    KGroupedProblem listed = uniform;
    listed.ks.assign(groups, 1000);
    for (const KernelConfig &c : candidateKGroupedConfigs(Target())) {
      double a = estimateKGroupedMakespanUs(uniform, c, t);
      double b = estimateKGroupedMakespanUs(listed, c, t);
      EXPECT_NEAR(a, b, 1e-9 * b) << groups << " " << c.entryName();
    }
  }
}

} // namespace
