//===- MGroupedValidationTest.cpp - The 1D2D entries' rules, no GPU -------===//
//
// checkMGroupedArguments for the four row mappings (contiguous, psum, masked,
// normal) and the C entries that refuse bad arguments before touching the
// driver.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/MGroupedGemm.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using dgemm::heuristics::Kind;
using dgemm::runtime::checkMGroupedArguments;
using dgemm::runtime::MGroupedArgs;
using ::testing::HasSubstr;

namespace {

template <typename T = void> T *fake(uintptr_t address) {
  return reinterpret_cast<T *>(address);
}

/// A valid call of `kind`: buffers far apart (1 GiB each), G = 4 groups of
/// 256 rows (masked), N = 4096, K = 7168.
MGroupedArgs valid(Kind kind) {
  MGroupedArgs args;
  args.kind = kind;
  args.a = fake(1ull << 30);
  args.sfa = fake(2ull << 30);
  args.b = fake(3ull << 30);
  args.sfb = fake(4ull << 30);
  args.d = fake(5ull << 30);
  args.mSum = 256;
  args.n = 4096;
  args.k = 7168;
  args.numGroups = kind == Kind::Normal ? 1 : 4;
  if (kind == Kind::MGroupedContiguous || kind == Kind::MGroupedContiguousPsum)
    args.groupedLayout = fake<const int32_t>(6ull << 30);
  if (kind == Kind::MGroupedMasked) {
    args.maskedM = fake<const int32_t>(7ull << 30);
    args.expectedM = 64;
  }
  return args;
}

std::string message(const MGroupedArgs &args) {
  return checkMGroupedArguments(args).message();
}

TEST(MGroupedValidationTest, AcceptsValidCallOfEveryKind) {
  for (Kind kind : {Kind::MGroupedContiguous, Kind::MGroupedContiguousPsum,
                    Kind::MGroupedMasked, Kind::Normal})
    EXPECT_TRUE(checkMGroupedArguments(valid(kind)).ok())
        << dgemm::heuristics::kindName(kind) << ": " << message(valid(kind));
}

TEST(MGroupedValidationTest, RefusesKGroupedKind) {
  MGroupedArgs args = valid(Kind::Normal);
  args.kind = Kind::KGroupedContiguous;
  EXPECT_THAT(message(args), HasSubstr("argument 'kind'"));
}

TEST(MGroupedValidationTest, MaskedNeedsMaskedM) {
  MGroupedArgs args = valid(Kind::MGroupedMasked);
  args.maskedM = nullptr;
  EXPECT_THAT(message(args), HasSubstr("argument 'masked_m' must not be null"));
  args.maskedM = fake<const int32_t>((7ull << 30) + 2);
  EXPECT_THAT(message(args), HasSubstr("'masked_m' must be 4-byte aligned"));
}

TEST(MGroupedValidationTest, MaskedIgnoresGroupedLayout) {
  // The masked kernel reads masked_m, not a grouped layout.
  MGroupedArgs args = valid(Kind::MGroupedMasked);
  args.groupedLayout = nullptr;
  EXPECT_TRUE(checkMGroupedArguments(args).ok()) << message(args);
}

TEST(MGroupedValidationTest, MaskedNeedsPositiveExpectedM) {
  MGroupedArgs args = valid(Kind::MGroupedMasked);
  args.expectedM = 0;
  EXPECT_THAT(message(args), HasSubstr("argument 'expected_m' must be in [1"));
  args.expectedM = -5;
  EXPECT_THAT(message(args), HasSubstr("'expected_m'"));
}

TEST(MGroupedValidationTest, MaskedRowsFit32Bits) {
  MGroupedArgs args = valid(Kind::MGroupedMasked);
  args.mSum = 1 << 30;
  args.numGroups = 2;
  EXPECT_THAT(message(args), HasSubstr("'num_groups * m_max' must be <= 2^31"));
}

TEST(MGroupedValidationTest, MaskedNamesMMax) {
  MGroupedArgs args = valid(Kind::MGroupedMasked);
  args.mSum = 0;
  EXPECT_THAT(message(args), HasSubstr("argument m_max must be in [1"));
}

TEST(MGroupedValidationTest, MaskedOverlapCountsEveryGroup) {
  // d = [4, 256, 4096] BF16 = 8 MiB; masked_m placed inside it.
  MGroupedArgs args = valid(Kind::MGroupedMasked);
  args.maskedM = fake<const int32_t>((5ull << 30) + (8ull << 20) - 16);
  EXPECT_THAT(message(args),
              HasSubstr("argument 'd' must not overlap 'masked_m'"));
  // a = [4, 256, 7168] FP8 ends just past d's start.
  args = valid(Kind::MGroupedMasked);
  args.a = fake((5ull << 30) - 4 * 256 * 7168 + 16);
  EXPECT_THAT(message(args), HasSubstr("argument 'd' must not overlap 'a'"));
  args.a = fake((5ull << 30) - 4 * 256 * 7168);
  EXPECT_TRUE(checkMGroupedArguments(args).ok()) << message(args);
}

TEST(MGroupedValidationTest, TileCountFits32Bits) {
  MGroupedArgs args = valid(Kind::Normal);
  args.mSum = 1 << 26;
  args.n = 1 << 24;
  EXPECT_THAT(message(args), HasSubstr("the tile count"));
}

TEST(MGroupedValidationTest, NormalNeedsOneGroup) {
  MGroupedArgs args = valid(Kind::Normal);
  args.numGroups = 2;
  EXPECT_THAT(message(args), HasSubstr("argument 'num_groups' must be 1"));
}

TEST(MGroupedValidationTest, NormalNeedsNoRowArray) {
  MGroupedArgs args = valid(Kind::Normal);
  EXPECT_EQ(args.groupedLayout, nullptr);
  EXPECT_EQ(args.maskedM, nullptr);
  EXPECT_TRUE(checkMGroupedArguments(args).ok());
}

TEST(MGroupedValidationTest, NormalRaggedMIsAccepted) {
  for (int64_t m : {1, 127, 4097}) {
    MGroupedArgs args = valid(Kind::Normal);
    args.mSum = m;
    EXPECT_TRUE(checkMGroupedArguments(args).ok())
        << m << ": " << message(args);
  }
}

TEST(MGroupedValidationTest, SharedRulesNameTheArgument) {
  for (Kind kind : {Kind::MGroupedContiguous, Kind::MGroupedContiguousPsum,
                    Kind::MGroupedMasked, Kind::Normal}) {
    MGroupedArgs args = valid(kind);
    args.k = 7000;
    EXPECT_THAT(message(args),
                HasSubstr("argument 'k' must be a multiple of 128"));
    args = valid(kind);
    args.n = 4100;
    EXPECT_THAT(message(args),
                HasSubstr("argument 'n' must be a multiple of 8"));
    args = valid(kind);
    args.sfa = fake((2ull << 30) + 4);
    EXPECT_THAT(message(args), HasSubstr("'sfa' must be 16-byte aligned"));
    args = valid(kind);
    args.d = nullptr;
    EXPECT_THAT(message(args), HasSubstr("argument 'd' must not be null"));
  }
}

TEST(MGroupedValidationTest, PsumNeedsItsArrayAndAHintInRange) {
  MGroupedArgs args = valid(Kind::MGroupedContiguousPsum);
  args.groupedLayout = nullptr;
  EXPECT_THAT(message(args), HasSubstr("argument 'psum' must not be null"));
  args = valid(Kind::MGroupedContiguousPsum);
  args.expectedM = -1;
  EXPECT_THAT(message(args),
              HasSubstr("argument 'expected_m' must be 0 (none)"));
  args.expectedM = 64; // a hint is optional
  EXPECT_TRUE(checkMGroupedArguments(args).ok()) << message(args);
}

TEST(MGroupedValidationTest, PsumOverlapCountsGroupsNotRows) {
  // psum is [G] int32 = 16 bytes: placed right after d (256 x 4096 BF16 =
  // 2 MiB) it is accepted, 16 bytes earlier it overlaps.
  MGroupedArgs args = valid(Kind::MGroupedContiguousPsum);
  args.groupedLayout = fake<const int32_t>((5ull << 30) + (2ull << 20));
  EXPECT_TRUE(checkMGroupedArguments(args).ok()) << message(args);
  args.groupedLayout = fake<const int32_t>((5ull << 30) + (2ull << 20) - 16);
  EXPECT_THAT(message(args), HasSubstr("argument 'd' must not overlap 'psum'"));
}

TEST(MGroupedValidationTest, PsumCEntryRefusesBeforeTheDriver) {
  char err[256] = "";
  int rc = dgemm_m_grouped_fp8_gemm_nt_contiguous_psum(
      fake(1ull << 30), fake(2ull << 30), fake(3ull << 30), fake(4ull << 30),
      fake(5ull << 30), nullptr, 256, 4096, 7168, 4, 0, nullptr, err,
      sizeof(err));
  EXPECT_EQ(rc, DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("'psum' must not be null"));
}

TEST(MGroupedValidationTest, MaskedCEntryRefusesBeforeTheDriver) {
  char err[256] = "";
  int rc = dgemm_m_grouped_fp8_gemm_nt_masked(
      fake(1ull << 30), fake(2ull << 30), fake(3ull << 30), fake(4ull << 30),
      fake(5ull << 30), fake<const int32_t>(7ull << 30), 256, 4096, 7168, 4,
      /*expected_m=*/0, nullptr, err, sizeof(err));
  EXPECT_EQ(rc, DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("'expected_m'"));
  rc = dgemm_m_grouped_fp8_gemm_nt_masked(
      fake(1ull << 30), fake(2ull << 30), fake(3ull << 30), fake(4ull << 30),
      fake(5ull << 30), nullptr, 256, 4096, 7168, 4, 64, nullptr, err,
      sizeof(err));
  EXPECT_EQ(rc, DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("'masked_m' must not be null"));
}

TEST(MGroupedValidationTest, NormalCEntryRefusesBeforeTheDriver) {
  char err[256] = "";
  int rc = dgemm_fp8_gemm_nt(
      fake(1ull << 30), fake(2ull << 30), fake(3ull << 30), fake(4ull << 30),
      fake(1ull << 30), 128, 4096, 7168, nullptr, err, sizeof(err));
  EXPECT_EQ(rc, DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'd' must not overlap 'a'"));
  rc = dgemm_fp8_gemm_nt(fake(1ull << 30), fake(2ull << 30), fake(3ull << 30),
                         fake(4ull << 30), fake(5ull << 30), 0, 4096, 7168,
                         nullptr, err, sizeof(err));
  EXPECT_EQ(rc, DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument m must be in [1"));
}

} // namespace
