//===- ValidationTest.cpp - Argument checks, no driver needed -------------===//
//
// One test per rule of checkKGroupedArgs; each asserts the message names the
// offending argument. The pointers are fake: validation never dereferences
// them.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Runtime/Validation.h"
#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/Overrides.h"

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

using namespace dgemm::runtime;
using dgemm::heuristics::Epilogue;
using dgemm::heuristics::KernelConfig;
using dgemm::heuristics::Target;
using dgemm::test::ScopedEnv;
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

//===----------------------------------------------------------------------===//
// Sizes past 64 bits
//===----------------------------------------------------------------------===//

TEST(ValidationTest, TileCountsSaturateInsteadOfOverflowing) {
  KernelConfig c;
  c.blockM = 64;
  c.blockN = 8;
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(numOutputTiles(int64_t(1) << 62, int64_t(1) << 40, 1 << 30, c),
            max);
  EXPECT_EQ(numOutputTiles(max, max, max, c), max);
  EXPECT_EQ(numOutputTiles(0, 128, 4, c), 0);
  c.blockM = 0; // the failed-choice sentinel: no division by zero
  EXPECT_EQ(numOutputTiles(128, 128, 4, c), 0);
  c.blockM = 64;
  c.clusterM = 0; // no division by zero either
  EXPECT_EQ(gridSizeFor(128, 128, 4, c, 132), 128);
}

TEST(ValidationTest, HugeSizesGiveNoWorkspaceAndNoAbort) {
  std::vector<int32_t> ks = {128, 256};
  ScopedEnv none("DGEMM_BLOCK_N", std::nullopt);
  for (auto [m, n] : {std::pair<int64_t, int64_t>{int64_t(1) << 62, 128},
                      {128, int64_t(1) << 40}}) {
    KernelConfig c;
    EXPECT_TRUE(
        chooseKGroupedConfig(m, n, 2, ks.data(), Target(), false, c).ok());
    EXPECT_EQ(dgemm::heuristics::checkConfig(c, Target()), "");
    EXPECT_GT(kGroupedWorkspaceBytesFor(m, n, 2, ks.data(), Target()), 0u);
  }
}

//===----------------------------------------------------------------------===//
// DGEMM_* overrides
//===----------------------------------------------------------------------===//

/// parseEnvOverrides over a fixed set of variables.
EnvOverrides parseOnly(const std::map<std::string, std::string> &vars) {
  return parseEnvOverrides([&](const char *name) -> const char * {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

TEST(EnvOverridesTest, NothingSetIsNoOverride) {
  EnvOverrides env = parseOnly({});
  EXPECT_EQ(env.error, "");
  EXPECT_FALSE(env.config.descSlots || env.config.clusterM ||
               env.config.quadB || env.config.blockM || env.config.blockN ||
               env.config.stages || env.config.redMaxBlocks ||
               env.config.epilogue);
  EXPECT_EQ(env.config.unsafe, 0u);
  EXPECT_FALSE(env.rasterBand);
  EXPECT_FALSE(env.allowUnsafeKernels);
  // Empty counts as unset.
  env = parseOnly({{"DGEMM_BLOCK_N", ""}, {"DGEMM_PARK", ""}});
  EXPECT_EQ(env.error, "");
  EXPECT_FALSE(env.config.blockN || env.config.epilogue);
}

TEST(EnvOverridesTest, ParsesEveryVariable) {
  EnvOverrides env = parseOnly({{"DGEMM_DESC_SLOTS", "1"},
                                {"DGEMM_CLUSTER_M", "2"},
                                {"DGEMM_BLOCK_N", "144"},
                                {"DGEMM_BLOCK_M", "192"},
                                {"DGEMM_STAGES", "3"},
                                {"DGEMM_RED_MAX_BLOCKS", "16"},
                                {"DGEMM_EPILOGUE", "reduction"},
                                {"DGEMM_QUAD_B", "0"},
                                {"DGEMM_UNSAFE", "skip_descriptor_drain"},
                                {"DGEMM_RASTER_BAND", "8"},
                                {"DGEMM_ALLOW_UNSAFE_KERNELS", "1"}});
  ASSERT_EQ(env.error, "");
  EXPECT_EQ(env.config.descSlots, 1);
  EXPECT_EQ(env.config.clusterM, 2);
  EXPECT_EQ(env.config.blockN, 144);
  EXPECT_EQ(env.config.blockM, 192);
  EXPECT_EQ(env.config.stages, 3);
  EXPECT_EQ(env.config.redMaxBlocks, 16);
  EXPECT_EQ(env.config.epilogue, Epilogue::Reduction);
  EXPECT_EQ(env.config.quadB, 0);
  EXPECT_EQ(env.config.unsafe, 1u);
  EXPECT_EQ(env.rasterBand, 8u);
  EXPECT_TRUE(env.allowUnsafeKernels);
}

TEST(EnvOverridesTest, OlderEpilogueSpellings) {
  auto epilogue = [](const std::map<std::string, std::string> &vars) {
    EnvOverrides env = parseOnly(vars);
    EXPECT_EQ(env.error, "");
    return env.config.epilogue;
  };
  EXPECT_EQ(epilogue({{"DGEMM_IN_PLACE_ONLY", "1"}}), Epilogue::InPlace);
  EXPECT_EQ(epilogue({{"DGEMM_IN_PLACE_ONLY", "1"}, {"DGEMM_PARK", "0"}}),
            Epilogue::InPlace);
  EXPECT_EQ(epilogue({{"DGEMM_IN_PLACE_ONLY", "1"}, {"DGEMM_PARK", "1"}}),
            Epilogue::Parked);
  EXPECT_EQ(epilogue({{"DGEMM_PARK", "1"}}), Epilogue::Parked);
  EXPECT_EQ(epilogue({{"DGEMM_PARK", "0"}}), Epilogue::InPlace);
  EXPECT_EQ(epilogue({{"DGEMM_IN_PLACE_ONLY", "0"}}), Epilogue::Register);
  // Not the in-place kernel, with the reduction bound deciding.
  EnvOverrides env =
      parseOnly({{"DGEMM_IN_PLACE_ONLY", "0"}, {"DGEMM_RED_MAX_BLOCKS", "8"}});
  EXPECT_EQ(env.error, "");
  EXPECT_FALSE(env.config.epilogue);
  EXPECT_EQ(env.config.redMaxBlocks, 8);
  // The in-place kernel has no reduction bound but 0.
  env =
      parseOnly({{"DGEMM_IN_PLACE_ONLY", "1"}, {"DGEMM_RED_MAX_BLOCKS", "0"}});
  EXPECT_EQ(env.error, "");
  EXPECT_EQ(env.config.epilogue, Epilogue::InPlace);
}

TEST(EnvOverridesTest, MalformedValuesNameTheVariableAndRule) {
  const struct {
    const char *name, *value, *message;
  } cases[] = {
      {"DGEMM_DESC_SLOTS", "3",
       "environment variable DGEMM_DESC_SLOTS must be 1 or 2, got '3' (unset "
       "it for the default)"},
      {"DGEMM_CLUSTER_M", "0", "DGEMM_CLUSTER_M must be 1 or 2, got '0'"},
      {"DGEMM_BLOCK_N", "wide",
       "DGEMM_BLOCK_N must be a multiple of 8 in [8, 256] (a tile width in "
       "columns), got 'wide'"},
      {"DGEMM_BLOCK_N", "100", "DGEMM_BLOCK_N must be a multiple of 8"},
      {"DGEMM_BLOCK_N", "264", "in [8, 256]"},
      {"DGEMM_BLOCK_M", "96",
       "DGEMM_BLOCK_M must be 64, 128 or 192 (a tile height in rows), got "
       "'96'"},
      {"DGEMM_STAGES", "1",
       "DGEMM_STAGES must be an integer in [2, 64] (pipeline stages), got "
       "'1'"},
      {"DGEMM_STAGES", "3 ", "got '3 '"},
      {"DGEMM_STAGES", "99999999999999999999", "DGEMM_STAGES must be"},
      {"DGEMM_RED_MAX_BLOCKS", "-1",
       "DGEMM_RED_MAX_BLOCKS must be an integer in [0, 1048576]"},
      {"DGEMM_EPILOGUE", "inplace",
       "DGEMM_EPILOGUE must be register, reduction, in_place or parked, got "
       "'inplace'"},
      {"DGEMM_IN_PLACE_ONLY", "yes",
       "DGEMM_IN_PLACE_ONLY must be 0 or 1, got 'yes'"},
      {"DGEMM_PARK", "2", "DGEMM_PARK must be 0 or 1, got '2'"},
      {"DGEMM_QUAD_B", "2", "DGEMM_QUAD_B must be 0 or 1, got '2'"},
      {"DGEMM_UNSAFE", "drain",
       "DGEMM_UNSAFE must be none, or a comma-separated list of "
       "skip_descriptor_drain and skip_proxy_fence, got 'drain'"},
      {"DGEMM_RASTER_BAND", "65537",
       "DGEMM_RASTER_BAND must be an integer in [0, 65536]"},
      {"DGEMM_ALLOW_UNSAFE_KERNELS", "true",
       "DGEMM_ALLOW_UNSAFE_KERNELS must be 0 or 1, got 'true'"},
  };
  for (const auto &c : cases) {
    EnvOverrides env = parseOnly({{c.name, c.value}});
    EXPECT_THAT(env.error, HasSubstr(c.message)) << c.name << "=" << c.value;
    EXPECT_FALSE(env.allowUnsafeKernels);
  }
}

TEST(EnvOverridesTest, ContradictionsAreErrors) {
  EXPECT_EQ(
      parseOnly({{"DGEMM_EPILOGUE", "parked"}, {"DGEMM_PARK", "1"}}).error,
      "environment variables DGEMM_IN_PLACE_ONLY and DGEMM_PARK must "
      "not be set with DGEMM_EPILOGUE, which replaces them");
  EXPECT_THAT(
      parseOnly({{"DGEMM_IN_PLACE_ONLY", "0"}, {"DGEMM_PARK", "1"}}).error,
      HasSubstr("DGEMM_PARK=1 (the parked in-place kernel) and "
                "DGEMM_IN_PLACE_ONLY=0 contradict each other"));
  EXPECT_THAT(
      parseOnly({{"DGEMM_IN_PLACE_ONLY", "1"}, {"DGEMM_RED_MAX_BLOCKS", "8"}})
          .error,
      HasSubstr("DGEMM_RED_MAX_BLOCKS=8 (the reduction epilogue) and "
                "DGEMM_IN_PLACE_ONLY=1 (the in-place kernel) contradict"));
  EXPECT_THAT(
      parseOnly({{"DGEMM_EPILOGUE", "register"}, {"DGEMM_RED_MAX_BLOCKS", "8"}})
          .error,
      HasSubstr("DGEMM_*: the red_max_blocks override must be 0 with "
                "the epilogue override register"));
}

/// The runtime's choice for 16 in-place groups of 2048 into 4096 x 7168
/// (the heuristics park its tiles), under the process environment.
std::string chosenEntry(bool inPlace = true) {
  const std::vector<int32_t> ks(16, 2048);
  KernelConfig c;
  Status s = chooseKGroupedConfig(4096, 7168, int(ks.size()), ks.data(),
                                  Target(), inPlace, c);
  if (!s.ok())
    return "error: " + s.message();
  std::string name = c.entryName();
  return name.substr(name.find("_bm") + 1);
}

TEST(EnvOverridesTest, ReadOnceThenOnlyByTheTestHook) {
  ScopedEnv park("DGEMM_PARK", std::nullopt);
  ASSERT_EQ(chosenEntry(), "bm128_bn128_s4_r2_ip_park");
  // Set behind the runtime's back: not seen until parsed again.
  ::setenv("DGEMM_PARK", "0", 1);
  EXPECT_EQ(chosenEntry(), "bm128_bn128_s4_r2_ip_park");
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chosenEntry(), "bm128_bn128_s6_r2_ip");
  ::unsetenv("DGEMM_PARK");
  reloadEnvOverridesForTesting();
  EXPECT_EQ(chosenEntry(), "bm128_bn128_s4_r2_ip_park");
}

TEST(EnvOverridesTest, ChoiceAppliesThemThroughTheHeuristics) {
  {
    ScopedEnv epilogue("DGEMM_EPILOGUE", "in_place");
    ScopedEnv stages("DGEMM_STAGES", "3");
    EXPECT_EQ(chosenEntry(), "bm128_bn128_s3_r2_ip");
    // A separate c has only the register epilogue.
    EXPECT_EQ(chosenEntry(false), "bm128_bn128_s3_r2_c2x1_q");
  }
  {
    ScopedEnv blockN("DGEMM_BLOCK_N", "144");
    EXPECT_EQ(chosenEntry(), "bm128_bn144_s6_r2_ip");
  }
  {
    ScopedEnv pairs("DGEMM_CLUSTER_M", "2");
    EXPECT_EQ(chosenEntry(), "bm128_bn128_s6_r2_c2x1_ip");
  }
  {
    ScopedEnv slots("DGEMM_DESC_SLOTS", "1");
    ScopedEnv unsafe("DGEMM_UNSAFE", "skip_descriptor_drain");
    EXPECT_EQ(chosenEntry(), "bm128_bn128_s4_r1_ip_park_unsafe_nodrain");
  }
  {
    ScopedEnv band("DGEMM_RASTER_BAND", "5");
    std::vector<int32_t> ks = {256};
    EXPECT_EQ(chooseRasterBand(256, 256, 1, ks.data()), 5u);
  }
}

TEST(EnvOverridesTest, MalformedVariableFailsEveryChoice) {
  ScopedEnv stages("DGEMM_STAGES", "x3");
  EXPECT_EQ(chosenEntry(),
            "error: environment variable DGEMM_STAGES must be an integer in "
            "[2, 64] (pipeline stages), got 'x3' (unset it for the default)");
  std::vector<int32_t> ks = {256, 128};
  KernelConfig c;
  Status s = chooseKGroupedConfig(2048, 2048, 2, ks.data(), Target(), false, c);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  // The value form's sign, and no workspace.
  EXPECT_EQ(chooseKGroupedConfig(2048, 2048, 2, ks.data(), Target()).blockM, 0);
  EXPECT_EQ(kGroupedWorkspaceBytesFor(2048, 2048, 2, ks.data(), Target()), 0u);
  // With a driver, the launch reports it too.
  ValidFixture f;
  f.args.c = f.args.d;
  Status launch = kGroupedFp8GemmNtContiguous(f.args, nullptr);
  if (launch.code() != ErrorCode::NoDriver) {
    EXPECT_EQ(launch.code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(launch.message(), HasSubstr("DGEMM_STAGES"));
  }
}

} // namespace
