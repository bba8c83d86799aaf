//===- ValidationTest.cpp - Argument checks, no driver needed -------------===//
//
// One test per rule of checkKGroupedArgs; each asserts the message names the
// offending argument. The pointers are fake: validation never dereferences
// them.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/Validation.h"
#include "dgemm/Runtime/KGroupedGemm.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace dgemm::runtime;
using ::testing::HasSubstr;

namespace {

void *fake(uintptr_t address) { return reinterpret_cast<void *>(address); }

struct ValidFixture {
  std::vector<int32_t> ks = {256, 128, 128, 256};
  KGroupedArgs args;

  ValidFixture() {
    args.a = fake(0x100000);
    args.sfa = fake(0x200000);
    args.b = fake(0x300000);
    args.sfb = fake(0x400000);
    args.d = fake(0x10000000);
    args.c = fake(0x20000000);
    args.m = 2048;
    args.n = 2048;
    args.numGroups = int64_t(ks.size());
    args.ksHost = ks.data();
    args.ksDevice = reinterpret_cast<const int32_t *>(fake(0x500000));
  }
  void setKs(std::vector<int32_t> newKs) {
    ks = std::move(newKs);
    args.ksHost = ks.data();
    args.numGroups = int64_t(ks.size());
  }
};

/// Expects an InvalidArgument naming `argument` and containing `rule`.
void expectInvalid(const KGroupedArgs &args, const std::string &argument,
                   const std::string &rule) {
  Status s = checkKGroupedArgs(args);
  ASSERT_FALSE(s.ok()) << "expected a violation of '" << rule << "' by "
                       << argument;
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'" + argument + "'"));
  EXPECT_THAT(s.message(), HasSubstr(rule));
}

TEST(ValidationTest, ValidArgumentsPass) {
  ValidFixture f;
  KGroupedShape shape;
  Status s = checkKGroupedArgs(f.args, &shape);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(shape.sumK, 768);
  EXPECT_EQ(shape.scaleBlocks, 6);
}

// Null and misaligned pointers: one test instance per argument.
struct PointerCase {
  const char *name;
  uint64_t alignment;
};

class PointerTest : public ::testing::TestWithParam<PointerCase> {
protected:
  /// Sets the field of `args` that GetParam() names.
  static void set(KGroupedArgs &args, const std::string &name, void *value) {
    if (name == "a")
      args.a = value;
    else if (name == "sfa")
      args.sfa = value;
    else if (name == "b")
      args.b = value;
    else if (name == "sfb")
      args.sfb = value;
    else if (name == "d")
      args.d = value;
    else if (name == "c")
      args.c = value;
    else if (name == "ks_host")
      args.ksHost = static_cast<const int32_t *>(value);
    else if (name == "ks_device")
      args.ksDevice = static_cast<const int32_t *>(value);
    else if (name == "workspace")
      args.workspace = value;
    else
      ADD_FAILURE() << "unknown argument " << name;
  }
};

TEST_P(PointerTest, MustNotBeNull) {
  if (std::string(GetParam().name) == "workspace")
    GTEST_SKIP() << "a null workspace selects the runtime's own buffer";
  ValidFixture f;
  set(f.args, GetParam().name, nullptr);
  expectInvalid(f.args, GetParam().name, "must not be null");
}

TEST_P(PointerTest, MustBeAligned) {
  if (GetParam().alignment == 1)
    GTEST_SKIP() << GetParam().name << " is host memory with no alignment rule";
  ValidFixture f;
  if (std::string(GetParam().name) == "workspace")
    f.args.workspaceBytes = 1 << 20;
  set(f.args, GetParam().name, fake(0x700000 + GetParam().alignment / 2));
  expectInvalid(f.args, GetParam().name,
                std::to_string(GetParam().alignment) + "-byte aligned");
  set(f.args, GetParam().name, fake(0x700000 + GetParam().alignment));
  EXPECT_TRUE(checkKGroupedArgs(f.args).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Arguments, PointerTest,
    ::testing::Values(PointerCase{"a", 16}, PointerCase{"sfa", 16},
                      PointerCase{"b", 16}, PointerCase{"sfb", 16},
                      PointerCase{"d", 16}, PointerCase{"c", 16},
                      PointerCase{"ks_host", 1}, PointerCase{"ks_device", 4},
                      PointerCase{"workspace", 128}),
    [](const ::testing::TestParamInfo<PointerCase> &info) {
      return std::string(info.param.name);
    });

TEST(ValidationTest, MMustBePositive) {
  ValidFixture f;
  f.args.m = 0;
  expectInvalid(f.args, "m", "must be >= 1, got 0");
  f.args.m = -4;
  expectInvalid(f.args, "m", "must be >= 1, got -4");
}

TEST(ValidationTest, NMustBePositive) {
  ValidFixture f;
  f.args.n = 0;
  expectInvalid(f.args, "n", "must be >= 1, got 0");
}

TEST(ValidationTest, MMustBeMultipleOf4) {
  ValidFixture f;
  f.args.m = 2046;
  expectInvalid(f.args, "m", "must be a multiple of 4");
}

TEST(ValidationTest, NMustBeMultipleOf4) {
  ValidFixture f;
  f.args.n = 2;
  expectInvalid(f.args, "n", "must be a multiple of 4");
}

TEST(ValidationTest, MMustFitInt32) {
  ValidFixture f;
  f.args.m = int64_t(1) << 31;
  expectInvalid(f.args, "m", "must be <= 2147483647");
}

TEST(ValidationTest, NMustFitInt32) {
  ValidFixture f;
  f.args.n = int64_t(1) << 32;
  expectInvalid(f.args, "n", "must be <= 2147483647");
}

TEST(ValidationTest, NumGroupsMustBePositive) {
  ValidFixture f;
  f.args.numGroups = 0;
  expectInvalid(f.args, "num_groups", "must be in [1, 2147483647]");
}

TEST(ValidationTest, KMustNotBeNegative) {
  ValidFixture f;
  f.setKs({128, -128, 256});
  expectInvalid(f.args, "ks_host[1]", "must be >= 0, got -128");
}

TEST(ValidationTest, KMustBeMultipleOf128) {
  ValidFixture f;
  f.setKs({128, 256, 100});
  expectInvalid(f.args, "ks_host[2]", "must be a multiple of 128");
}

TEST(ValidationTest, EmptyGroupsAreAccepted) {
  ValidFixture f;
  f.setKs({0, 128, 0});
  KGroupedShape shape;
  ASSERT_TRUE(checkKGroupedArgs(f.args, &shape).ok());
  EXPECT_EQ(shape.sumK, 128);
  EXPECT_EQ(shape.scaleBlocks, 1);
}

TEST(ValidationTest, AllGroupsEmptyKeepsScaleMapDimensionOne) {
  ValidFixture f;
  f.setKs({0, 0, 0, 0});
  KGroupedShape shape;
  ASSERT_TRUE(checkKGroupedArgs(f.args, &shape).ok());
  EXPECT_EQ(shape.sumK, 0);
  EXPECT_EQ(shape.scaleBlocks, 1);
}

constexpr int32_t kMaxK = 2147483520;      // largest multiple of 128 in int32
constexpr int64_t kMaxExtent = 2147483644; // largest multiple of 4 in int32

TEST(ValidationTest, SumKTimesMMustFit64Bits) {
  ValidFixture f;
  f.setKs({kMaxK, kMaxK, kMaxK});
  f.args.m = kMaxExtent;
  f.args.n = 4;
  expectInvalid(f.args, "ks_host", "sum(K) * m");
}

TEST(ValidationTest, SumKTimesNMustFit64Bits) {
  ValidFixture f;
  f.setKs({kMaxK, kMaxK, kMaxK});
  f.args.m = 4;
  f.args.n = kMaxExtent;
  expectInvalid(f.args, "ks_host", "sum(K) * n");
}

TEST(ValidationTest, LargeSumKTimesMIsAccepted) {
  // sum(K) * M > 2^31: 64-bit offsets, not a limit.
  ValidFixture f;
  f.setKs({65536, 69632, 67584, 67584});
  f.args.m = 8192;
  EXPECT_TRUE(checkKGroupedArgs(f.args).ok());
}

TEST(ValidationTest, ScaleMapDimensionMustFitTensorMap) {
  ValidFixture f;
  f.setKs(std::vector<int32_t>(257, kMaxK));
  f.args.m = 4;
  f.args.n = 4;
  expectInvalid(f.args, "ks_host", "must be <= 2^32");
}

TEST(ValidationTest, OutputSizeMustFit64Bits) {
  ValidFixture f;
  f.setKs({128});
  f.args.m = kMaxExtent;
  f.args.n = kMaxExtent;
  expectInvalid(f.args, "num_groups", "must fit in 64 bits");
}

TEST(ValidationTest, CAndDMustBeSameOrDisjoint) {
  ValidFixture f;
  f.args.c = static_cast<char *>(f.args.d) + 16;
  expectInvalid(f.args, "c", "must be the same pointer or not overlap");
  f.args.c = f.args.d;
  EXPECT_TRUE(checkKGroupedArgs(f.args).ok());
  // Adjacent is disjoint: 4 groups * 2048 * 2048 floats.
  f.args.c = static_cast<char *>(f.args.d) + 4 * 2048 * 2048 * 4;
  EXPECT_TRUE(checkKGroupedArgs(f.args).ok());
}

TEST(ValidationTest, WorkspaceMustBeLargeEnough) {
  ValidFixture f;
  f.args.workspace = fake(0x800000);
  f.args.workspaceBytes = 1000;
  Status s = checkWorkspaceSize(f.args, 1024);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'workspace_bytes' must be >= 1024"));
  f.args.workspaceBytes = 1024;
  EXPECT_TRUE(checkWorkspaceSize(f.args, 1024).ok());
}

TEST(ValidationTest, NullWorkspaceNeedsNoSize) {
  ValidFixture f;
  EXPECT_TRUE(checkWorkspaceSize(f.args, 1 << 20).ok());
}

TEST(ValidationTest, CheckArgumentsIncludesWorkspaceSize) {
  ValidFixture f;
  f.args.workspace = fake(0x800000);
  f.args.workspaceBytes = 128;
  Status s = checkKGroupedArguments(f.args);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("'workspace_bytes'"));
  f.args.workspaceBytes =
      kGroupedWorkspaceBytesFor(f.args.m, f.args.n, int(f.args.numGroups),
                                f.args.ksHost, dgemm::heuristics::Target());
  EXPECT_TRUE(checkKGroupedArguments(f.args).ok());
}

TEST(ValidationTest, ArgumentsAreCheckedBeforeTheDriver) {
  // On a machine without a driver a bad argument must still be reported as
  // such, not as a missing driver.
  ValidFixture f;
  f.args.m = 6;
  Status s = kGroupedFp8GemmNtContiguous(f.args, nullptr);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'m'"));
}

} // namespace
