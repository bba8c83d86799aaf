//===- DeterminismGpuTest.cpp - The bug report's repro as a test ----------===//
//
// The acceptance case of the project (shared/seed): DeepGEMM 2.6.1's kernel
// gave non-deterministic, sometimes exploding results when an expert had
// exactly 128 tokens and an all-zero channel. Same shapes, per-channel cast
// and packing as the report; each of its zero-channel scale values; every
// call checked on the device against the first (bitwise) and against 100x
// the reference norm.
//
// DGEMM_DETERMINISM_ITERS sets the calls per scale value (default 10000).
// DGEMM_EXPECT_RACE=1 marks a bundle built with the descriptor guard
// disabled: then RaceIsDetectedWithoutGuard must see failures, and the
// ordinary test is skipped.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtils.h"

#include "dgemm/Runtime/KGroupedGemm.h"

#include "dgemm/Runtime/Overrides.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>

using namespace dgemm::test;
using dgemm::runtime::kGroupedFp8GemmNtContiguous;
using dgemm::runtime::kGroupedWorkspaceBytes;
using dgemm::runtime::Status;

namespace {

const std::vector<int32_t> kSeedKs = {256, 128, 128, 256};
constexpr int64_t kHidden = 2048; // m: grad_y channels
constexpr int64_t kFfn = 2048;    // n: activation channels

bool expectRace() {
  const char *env = std::getenv("DGEMM_EXPECT_RACE");
  return env && std::string(env) == "1";
}

int64_t iterations(Bundle bundle) {
  int64_t iters = 10000;
  if (const char *env = std::getenv("DGEMM_DETERMINISM_ITERS"))
    iters = std::max<int64_t>(1, std::atoll(env));
  // The reference kernel is slow; it only checks this test's machinery.
  return bundle == Bundle::Reference ? std::min<int64_t>(iters, 20) : iters;
}

/// Standard normal samples (Box-Muller).
class Normal {
public:
  explicit Normal(uint64_t seed) : state_(seed) {}
  float next() {
    if (hasSpare_) {
      hasSpare_ = false;
      return spare_;
    }
    double u1 = (double(nextBits() >> 11) + 1) * 0x1.0p-53;
    double u2 = double(nextBits() >> 11) * 0x1.0p-53;
    double r = std::sqrt(-2 * std::log(u1));
    spare_ = float(r * std::sin(2 * M_PI * u2));
    hasSpare_ = true;
    return float(r * std::cos(2 * M_PI * u2));
  }

private:
  uint64_t nextBits() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
  float spare_ = 0;
  bool hasSpare_ = false;
};

/// The report's per-channel cast (128 tokens per scale) and k-major packing
/// of x (tokens x channels, row-major) into `codes` and `scales`.
void castAndPack(const std::vector<float> &x, int64_t channels,
                 const std::vector<int32_t> &ks, float sfVal,
                 std::vector<uint8_t> &codes, std::vector<float> &scales) {
  int64_t tokens = int64_t(x.size()) / channels;
  codes.assign(size_t(tokens * channels), 0);
  scales.assign(size_t(tokens / 128 * channels), 0.f);
  std::vector<uint8_t> rowMajor(x.size());
  for (int64_t kb = 0; kb < tokens / 128; ++kb) {
    for (int64_t ch = 0; ch < channels; ++ch) {
      float amax = 0;
      for (int64_t t = kb * 128; t < kb * 128 + 128; ++t)
        amax = std::max(amax, std::fabs(x[t * channels + ch]));
      float sf = amax / 448.0f;
      if (sf == 0) // The report's handling of all-zero channels.
        sf = sfVal;
      sf = std::max(sf, 1e-30f);
      scales[kb * channels + ch] =
          sf; // sf.T: (channels, KB), strides (1, channels)
      float inv = 1.0f / sf;
      for (int64_t t = kb * 128; t < kb * 128 + 128; ++t)
        rowMajor[t * channels + ch] = encodeE4m3(x[t * channels + ch] * inv);
    }
  }
  int64_t prefix = 0;
  for (int32_t k : ks) {
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t t = 0; t < k; ++t)
        codes[channels * prefix + ch * k + t] =
            rowMajor[(prefix + t) * channels + ch];
    prefix += k;
  }
}

/// The report's operands: grad_y ~ randn * 1e-7 with channel 0 all zero for
/// the 128-token experts, activations ~ randn * 0.4, both bf16; c = d = 0.
HostProblem makeSeedProblem(float sfVal) {
  int64_t tokens = 0;
  for (int32_t k : kSeedKs)
    tokens += k;
  Normal normal(0);
  std::vector<float> gradY(size_t(tokens * kHidden)), s(size_t(tokens * kFfn));
  for (float &v : gradY)
    v = roundToBf16(roundToBf16(normal.next()) * 1e-7f);
  for (float &v : s)
    v = roundToBf16(roundToBf16(normal.next()) * 0.4f);
  int64_t offset = 0;
  for (int32_t k : kSeedKs) {
    if (k == 128)
      for (int64_t t = offset; t < offset + k; ++t)
        gradY[t * kHidden + 0] = 0;
    offset += k;
  }
  HostProblem p;
  p.m = kHidden;
  p.n = kFfn;
  p.ks = kSeedKs;
  p.sumK = tokens;
  castAndPack(gradY, kHidden, kSeedKs, sfVal, p.a, p.sfa);
  castAndPack(s, kFfn, kSeedKs, sfVal, p.b, p.sfb);
  return p;
}

struct RunCounts {
  int64_t calls = 0;
  int64_t blownUp = 0;           // some group's norm > 100x its reference norm
  int64_t notIdentical = 0;      // output not bitwise equal to the first call's
  double worstRatio = 0;         // largest output norm / reference norm
  std::vector<double> firstDiff; // first call vs reference, per group
};

class DeterminismTest : public GpuTest {
protected:
  /// Runs the seed case `iters` times with zero-channel scale `sfVal`.
  void run(Bundle bundle, float sfVal, RunCounts &counts);
  void expectForcedKernelStable(
      const char *label, bool (*isForced)(const dgemm::heuristics::KernelConfig &));
};

void DeterminismTest::run(Bundle bundle, float sfVal, RunCounts &counts) {
  DGEMM_PREPARE_BUNDLE(bundle, kHidden, kFfn, kSeedKs, /*inPlace=*/true);
  std::string ptx = testKernelsPtx();
  if (ptx.empty())
    GTEST_SKIP() << "the compare kernel was not built (no nvcc at build time)";
  CUmodule module = nullptr;
  CUfunction compare = nullptr;
  DGEMM_CU_ASSERT(driver().cuModuleLoadData(&module, ptx.c_str()));
  DGEMM_CU_ASSERT(
      driver().cuModuleGetFunction(&compare, module, "dgemm_test_compare"));

  HostProblem p = makeSeedProblem(sfVal);
  DeviceProblem dev;
  ASSERT_TRUE(uploadProblem(p, /*inPlace=*/true, dev));
  const int64_t groups = p.groups();
  const size_t elems = size_t(p.outputElems());
  DeviceBuffer first, stats, workspace;
  ASSERT_TRUE(first.allocate(elems * 4));
  const int64_t iters = iterations(bundle);
  const size_t slot = size_t(1 + groups); // 8-byte words per call
  ASSERT_TRUE(stats.allocate(size_t(iters) * slot * 8));
  DGEMM_CU_ASSERT(driver().cuMemsetD32Async(stats.ptr(), 0,
                                            size_t(iters) * slot * 2, stream_));
  uint64_t wsBytes = kGroupedWorkspaceBytes(p.m, p.n, int(groups), p.ks.data());
  ASSERT_TRUE(workspace.allocate(wsBytes));
  auto args = makeArgs(p, dev, workspace.ptr(), wsBytes);

  unsigned long long perGroup = unsigned(p.m * p.n);
  for (int64_t it = 0; it < iters; ++it) {
    // The report zeroes the output before each call and accumulates into it.
    DGEMM_CU_ASSERT(driver().cuMemsetD32Async(dev.d.ptr(), 0, elems, stream_));
    DGEMM_ASSERT_LAUNCHED(kGroupedFp8GemmNtContiguous(args, stream_));
    if (it == 0) {
      DGEMM_CU_ASSERT(driver().cuMemcpyDtoDAsync(first.ptr(), dev.d.ptr(),
                                                 elems * 4, stream_));
    }
    CUdeviceptr d = dev.d.ptr(), f = first.ptr();
    CUdeviceptr out = stats.ptr() + it * slot * 8;
    void *params[] = {&d, &f, &perGroup, &out};
    DGEMM_CU_ASSERT(driver().cuLaunchKernel(compare, 264, unsigned(groups), 1,
                                            256, 1, 1, 0, stream_, params,
                                            nullptr));
  }
  DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));

  std::vector<uint64_t> hostStats(size_t(iters) * slot);
  ASSERT_TRUE(stats.download(hostStats.data(), hostStats.size() * 8));
  std::vector<float> firstOut(elems);
  ASSERT_TRUE(first.download(firstOut.data(), elems * 4));
  driver().cuModuleUnload(module);

  std::vector<int64_t> rows = referenceRows(p, 0);
  std::vector<double> ref = referenceOutput(p, rows);
  counts.firstDiff = compareOutput(p, firstOut, rows, ref).groupDiff;
  std::vector<double> refNorm(size_t(groups), 0.0);
  for (int64_t g = 0; g < groups; ++g) {
    for (size_t i = 0; i < rows.size() * size_t(p.n); ++i) {
      double y = ref[g * rows.size() * p.n + i];
      refNorm[g] += y * y;
    }
    refNorm[g] = std::sqrt(refNorm[g]);
  }
  for (int64_t it = 0; it < iters; ++it) {
    const uint64_t *s = &hostStats[size_t(it) * slot];
    counts.notIdentical += s[0] != 0;
    bool blown = false;
    for (int64_t g = 0; g < groups; ++g) {
      double sumsq;
      std::memcpy(&sumsq, &s[1 + g], 8);
      double norm = std::sqrt(sumsq); // inf if any output was not finite
      if (!(norm <= 100 * refNorm[g]))
        blown = true;
      if (refNorm[g] > 0)
        counts.worstRatio = std::max(counts.worstRatio, norm / refNorm[g]);
    }
    counts.blownUp += blown;
  }
  counts.calls = iters;
}

std::ostream &operator<<(std::ostream &os, const RunCounts &c) {
  os << c.calls << " calls, " << c.blownUp << " blown up (> 100x reference "
     << "norm), " << c.notIdentical << " not bitwise identical to the first, "
     << "worst norm ratio " << c.worstRatio << ", first-call diff per group [";
  for (size_t g = 0; g < c.firstDiff.size(); ++g)
    os << (g ? ", " : "") << c.firstDiff[g];
  return os << "]";
}

class SeedDeterminismTest
    : public DeterminismTest,
      public ::testing::WithParamInterface<std::tuple<Bundle, float>> {};

TEST_P(SeedDeterminismTest, EveryCallIdenticalAndBounded) {
  const auto &[bundle, sfVal] = GetParam();
  if (bundle == Bundle::Real && expectRace())
    GTEST_SKIP() << "DGEMM_EXPECT_RACE=1: this bundle is expected to race";
  RunCounts counts;
  run(bundle, sfVal, counts);
  if (IsSkipped() || HasFatalFailure())
    return;
  std::cout << "[ determinism ] " << bundleName(bundle) << " sf_val=" << sfVal
            << ": " << counts << std::endl;
  RecordProperty("blown_up", std::to_string(counts.blownUp));
  RecordProperty("not_identical", std::to_string(counts.notIdentical));
  for (size_t g = 0; g < counts.firstDiff.size(); ++g)
    EXPECT_LT(counts.firstDiff[g], 1e-3) << "group " << g;
  EXPECT_EQ(counts.blownUp, 0);
  EXPECT_EQ(counts.notIdentical, 0);
}

std::string
seedCaseName(const ::testing::TestParamInfo<std::tuple<Bundle, float>> &info) {
  float sf = std::get<1>(info.param);
  const char *name = sf == 1.0f    ? "sf_1"
                     : sf == 1e-4f ? "sf_1em4"
                     : sf == 1e-8f ? "sf_1em8"
                                   : "sf_1em30";
  return bundleName(std::get<0>(info.param)) + "_" + name;
}

INSTANTIATE_TEST_SUITE_P(
    SeedCase, SeedDeterminismTest,
    ::testing::Combine(::testing::Values(Bundle::Real, Bundle::Reference),
                       ::testing::Values(1.0f, 1e-4f, 1e-8f, 1e-30f)),
    seedCaseName);

/// Runs the seed case at two scales with a kernel the environment forced
/// (the caller's ScopedEnv), asserting through `isForced` that it was applied;
/// every call must equal the first and match the reference.
void DeterminismTest::expectForcedKernelStable(
    const char *label, bool (*isForced)(const dgemm::heuristics::KernelConfig &)) {
  for (float sfVal : {1.0f, 1e-4f}) {
    RunCounts counts;
    run(Bundle::Real, sfVal, counts);
    if (IsSkipped() || HasFatalFailure())
      return;
    ASSERT_TRUE(isForced(preparedConfig_)) << preparedConfig_.entryName();
    std::cout << "[ determinism ] " << label << " "
              << preparedConfig_.entryName() << " sf_val=" << sfVal << ": "
              << counts << std::endl;
    for (size_t g = 0; g < counts.firstDiff.size(); ++g)
      EXPECT_LT(counts.firstDiff[g], 1e-3) << "group " << g;
    EXPECT_EQ(counts.blownUp, 0);
    EXPECT_EQ(counts.notIdentical, 0);
  }
}

// The parked kernel (park = 1, forced on the seed's shapes at 128 columns,
// the width the heuristics park): its workers take each tile from the park
// while the math warpgroups compute the next, and the seed's groups of one
// and two blocks switch groups, and the park's phase, on almost every tile.
TEST_F(DeterminismTest, ParkedKernelOnSeedShapes) {
  if (expectRace())
    GTEST_SKIP() << "DGEMM_EXPECT_RACE=1: this bundle is expected to race";
  ScopedEnv blockN("DGEMM_BLOCK_N", "128");
  ScopedEnv inPlaceOnly("DGEMM_IN_PLACE_ONLY", "1");
  ScopedEnv park("DGEMM_PARK", "1");
  expectForcedKernelStable("parked", [](const dgemm::heuristics::KernelConfig &c) {
    return c.epilogue == dgemm::heuristics::Epilogue::Parked;
  });
}

// The reduction kernel (red_max_blocks = 8, forced: the seed's groups of
// one and two blocks take the register epilogue by default), whose tiles add
// their sums to d with red.global.add; at 128 columns, the width the
// heuristics give it (groups of 7-8 blocks).
TEST_F(DeterminismTest, ReductionKernelOnSeedShapes) {
  if (expectRace())
    GTEST_SKIP() << "DGEMM_EXPECT_RACE=1: this bundle is expected to race";
  ScopedEnv blockN("DGEMM_BLOCK_N", "128");
  ScopedEnv redMaxBlocks("DGEMM_RED_MAX_BLOCKS", "8");
  expectForcedKernelStable("reduction", [](const dgemm::heuristics::KernelConfig &c) {
    return c.redMaxBlocks == 8;
  });
}

TEST_F(DeterminismTest, RaceIsDetectedWithoutGuard) {
  if (!expectRace())
    GTEST_SKIP() << "set DGEMM_EXPECT_RACE=1 for a bundle built with the "
                    "descriptor guard disabled";
  // The 128-column tile: the seed's 64-column default showed no differing
  // call in 8,000 on an H100 (bench/NOTES.md section 22); the 128-column
  // register kernel 16 and 7 in two runs there, the 128-column reduction
  // kernel 7 in section 21.
  ScopedEnv blockN("DGEMM_BLOCK_N", "128");
  // The unguarded bundle's kernels are named and marked as built without the
  // descriptor drain (scripts/final_round.sh builds it so); loading them
  // needs the opt-in. DGEMM_UNSAFE may name other options.
  std::optional<ScopedEnv> unsafe;
  if (!std::getenv("DGEMM_UNSAFE"))
    unsafe.emplace("DGEMM_UNSAFE", "skip_descriptor_drain");
  struct AllowUnsafe {
    AllowUnsafe() { dgemm::runtime::setAllowUnsafeKernels(true); }
    ~AllowUnsafe() { dgemm::runtime::resetAllowUnsafeKernelsForTesting(); }
  } allowUnsafe;
  int64_t failures = 0;
  for (float sfVal : {1.0f, 1e-4f, 1e-8f, 1e-30f}) {
    RunCounts counts;
    run(Bundle::Real, sfVal, counts);
    if (IsSkipped() || HasFatalFailure())
      return;
    std::cout << "[ determinism ] unguarded sf_val=" << sfVal << ": " << counts
              << std::endl;
    failures += counts.notIdentical + counts.blownUp;
  }
  EXPECT_GT(failures, 0)
      << "the unguarded kernel showed no race: the test would not catch one";
}

} // namespace
