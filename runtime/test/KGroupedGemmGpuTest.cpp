//===- KGroupedGemmGpuTest.cpp - Correctness of the k-grouped GEMM --------===//
//
// Each case runs against the real bundle (skipped if it lacks the kernel)
// and against the reference kernel (TestKernels.cu), which checks the
// runtime's launch path and these tests themselves before real kernels
// exist.
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtils.h"

#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/KernelBundle.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

using namespace dgemm::test;
using dgemm::runtime::ErrorCode;
using dgemm::runtime::KGroupedArgs;
using dgemm::runtime::KGroupedKernelInfo;
using dgemm::runtime::kGroupedKernelInfo;
using dgemm::runtime::kGroupedFp8GemmNtContiguous;
using dgemm::runtime::kGroupedWorkspaceBytes;
using dgemm::runtime::Status;
using ::testing::HasSubstr;

namespace {

constexpr double kMaxDiff = 1e-3;
constexpr unsigned kNaNBits = 0x7fc00000u;

struct GemmCase {
  const char *name;
  int64_t m, n;
  std::vector<int32_t> ks;
  /// c == d: accumulate into d (short tiles may add their sum with
  /// reductions); otherwise d = c + sum is written from registers.
  bool inPlace;
  /// DGEMM_BLOCK_N for this case (0: the heuristics' choice).
  int blockN = 0;
  /// DGEMM_RED_MAX_BLOCKS for this case (-1: the heuristics' choice).
  int redMaxBlocks = -1;
  /// DGEMM_IN_PLACE_ONLY for this case (-1: the heuristics' choice).
  int inPlaceOnly = -1;
  /// DGEMM_BLOCK_M for this case (0: the heuristics' choice).
  int blockM = 0;
  /// DGEMM_QUAD_B for this case (-1: the heuristics' choice; 0: B's rows in
  /// order).
  int quadB = -1;
  /// The quad_b the launched kernel must have (-1: not checked).
  int expectQuadB = -1;
  /// DGEMM_PARK for this case (-1: the heuristics' choice).
  int park = -1;
  /// The park the launched kernel must have (-1: not checked).
  int expectPark = -1;
};

/// Sets an environment variable for one test when `value` >= `minValue` and
/// restores its absence afterwards (the runtime parses its overrides again
/// each time).
class EnvOverride {
public:
  EnvOverride(const char *name, int value, int minValue)
      : name_(name), active_(value >= minValue) {
    if (active_) {
      ::setenv(name_, std::to_string(value).c_str(), 1);
      dgemm::runtime::reloadEnvOverridesForTesting();
    }
  }
  ~EnvOverride() {
    if (active_) {
      ::unsetenv(name_);
      dgemm::runtime::reloadEnvOverridesForTesting();
    }
  }

private:
  const char *name_;
  bool active_;
};

void PrintTo(const GemmCase &kase, std::ostream *os) { *os << kase.name; }

/// 128 groups sharing 32 K blocks at random: most get 0 or 128 tokens.
std::vector<int32_t> manySmallGroups() {
  std::vector<int32_t> ks(128, 0);
  uint64_t state = 12345;
  for (int block = 0; block < 32; ++block) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    ks[(state >> 33) % 128] += 128;
  }
  return ks;
}

std::vector<GemmCase> gemmCases() {
  return {
      // The bug report's shapes, accumulating in place (groups of 1-2
      // blocks: the register epilogue), and the same through the reduction
      // epilogue (forced).
      {"SeedShapes", 2048, 2048, {256, 128, 128, 256}, true},
      {"SeedShapesReductionEpilogue", 2048, 2048, {256, 128, 128, 256}, true,
       0, 8},
      {"MixedEmptyGroups", 512, 384, {0, 128, 0, 128, 128, 0}, false},
      {"EightGroups",
       768,
       2048,
       {128, 128, 256, 256, 128, 256, 256, 256},
       false},
      {"LargeFourGroups", 4096, 7168, {8192, 8576, 8704, 8832}, false},
      // Quad-ordered B (N % 16 == 0) with ragged M and a last n-block of 16
      // columns, through the register epilogue (multicast pairs: 272 columns
      // do not pair, so also without) and the reduction epilogue; and the
      // same shapes with B's rows in order.
      {"QuadRaggedEdges", 388, 272, {128, 256, 0, 1280}, false, 0, -1, -1, 0,
       -1, 1},
      {"QuadRaggedEdgesReduction", 388, 272, {128, 256, 0, 384}, true, 0, 8,
       -1, 0, -1, 1},
      {"QuadPairedCtas", 512, 4096, {384, 0, 1152}, false, 0, -1, -1, 0, -1,
       1},
      {"QuadOffRaggedEdges", 388, 272, {128, 256, 0, 1280}, false, 0, -1, -1,
       0, 0, 0},
      {"ManySmallGroups", 2048, 768, manySmallGroups(), false},
      // sum(K) * M = 2.2e9 > 2^31: 64-bit offsets everywhere.
      {"SumKTimesMAbove2To31", 8192, 256, {65536, 69632, 67584, 67584}, false},
      {"AllGroupsEmpty", 256, 256, {0, 0, 0}, false},
      // M and N not multiples of any block size.
      // N % 16 != 0: B's rows in order.
      {"RaggedEdges", 388, 260, {128, 256, 0}, true, 0, -1, -1, 0, -1, 0},
      {"RaggedEdgesSeparateC", 388, 260, {128, 256, 0}, false, 0, -1, -1, 0,
       -1, 0},
      // The reduction epilogue (forced) with B's rows in order.
      {"RaggedEdgesReduction", 388, 260, {128, 256, 0}, true, 0, 8, -1, 0, -1,
       0},
      // The in-place kernel, parked (chosen: with groups of 12-20 blocks the
      // park's modelled time beats the register epilogue's), with an empty
      // group.
      {"LargeInPlace", 4096, 7168, {1536, 2048, 0, 2560}, true, 0, -1, -1, 0,
       -1, -1, -1, 1},
      // The in-place kernel forced on short tiles (their c prefetched), on
      // ragged edges and with one math warpgroup.
      {"SeedShapesInPlaceKernel", 2048, 2048, {256, 128, 128, 256}, true, 0,
       -1, 1},
      {"RaggedEdgesInPlaceKernel", 388, 260, {128, 256, 0, 1280}, true, 0, -1,
       1},
      {"SmallMInPlaceKernel", 64, 2048, {256, 128, 0, 1536}, true, 0, -1, 1},
      // The reduction kernel on tiles of 8 blocks (reduced) and of 16 and 9
      // blocks (register epilogue) in one launch.
      {"LargeInPlaceMixedEpilogues", 4096, 7168, {1024, 2048, 0, 1152}, true,
       0, 8},
      {"ManySmallGroupsInPlace", 2048, 768, manySmallGroups(), true},
      // Small M: one math warpgroup (block_m 64), in place through the
      // register epilogue (chosen) and the reduction epilogue (forced).
      {"SmallMInPlace", 64, 2048, {256, 128, 0, 384}, true},
      {"SmallMInPlaceReduction", 64, 2048, {256, 128, 0, 384}, true, 0, 8},
      // block_n 144 with the reduction kernel (forced): an odd chunk count,
      // so consecutive tiles start on the buffer the previous tile ended on.
      {"OddChunkCountInPlace", 1024, 1440, {256, 384, 128}, true, 144, 8},
      // Three math warpgroups (block_m 192, forced): the register epilogue
      // with a 64-row last m-block, the reduction kernel on the seed's
      // shapes, and the in-place kernel on ragged edges.
      {"ThreeWarpgroupsSeparateC", 448, 1024, {1024, 0, 384}, false, 128, -1,
       -1, 192},
      {"ThreeWarpgroupsSeedShapes", 2048, 2048, {256, 128, 128, 256}, true,
       128, 8, -1, 192},
      {"ThreeWarpgroupsRaggedInPlaceKernel", 388, 260, {128, 256, 0, 1280},
       true, 96, -1, 1, 192},
      // Parked tiles (park = 1), forced at 128 columns (the heuristics give
      // these lengths the register epilogue), with ragged M and N, empty
      // groups and groups of one block; then at every other width the
      // bundle parks, with few tiles per CTA.
      {"ParkedRaggedEdges",
       1000,
       1000,
       {384, 0, 1280, 128, 2048, 0, 640, 4096, 128, 256, 3072, 0, 1536, 512,
        128, 2560},
       true, 128, -1, 1, 0, -1, -1, 1, 1},
      {"ParkedWideTiles", 1000, 1000, {384, 0, 1280, 128}, true, 192, -1, 1,
       0, -1, -1, 1, 1},
      {"Parked160Columns", 520, 1000, {384, 0, 1280, 128}, true, 160, -1, 1,
       128, -1, -1, 1, 1},
      {"Parked96Columns", 520, 1000, {384, 0, 1280, 128}, true, 96, -1, 1, 128,
       -1, -1, 1, 1},
      {"Parked64Columns", 520, 1000, {384, 0, 1280, 128}, true, 64, -1, 1, 128,
       -1, -1, 1, 1},
      // Last n-blocks of 192-column tiles (forced) with exactly 64 live
      // columns (in-place kernel), 80 (quad-ordered B, separate c), 16
      // (reduction kernel), exactly 128 (parked) and 152. Built with
      // narrow-tail-mma, the first four run 64- and 128-column products and
      // the last the full width; by default all run the full width.
      {"NarrowTail64InPlaceKernel", 388, 448, {256, 0, 1280, 128}, true, 192,
       -1, 1},
      {"NarrowTail128Quad", 256, 464, {384, 1280, 0}, false, 192, -1, -1, 0,
       1, 1},
      {"NarrowTailReduction", 256, 400, {256, 384, 128}, true, 192, 8},
      {"NarrowTailParked", 520, 320, {384, 0, 1280, 128}, true, 192, -1, 1, 0,
       -1, -1, 1, 1},
      {"FullWidthRaggedTail", 256, 536, {256, 1280}, false, 192},
  };
}

class KGroupedGemmTest
    : public GpuTest,
      public ::testing::WithParamInterface<std::tuple<Bundle, GemmCase>> {};

TEST_P(KGroupedGemmTest, MatchesReference) {
  const auto &[bundle, kase] = GetParam();
  EnvOverride blockN("DGEMM_BLOCK_N", kase.blockN, 1);
  EnvOverride blockM("DGEMM_BLOCK_M", kase.blockM, 1);
  EnvOverride redMaxBlocks("DGEMM_RED_MAX_BLOCKS", kase.redMaxBlocks, 0);
  EnvOverride inPlaceOnly("DGEMM_IN_PLACE_ONLY", kase.inPlaceOnly, 0);
  EnvOverride quadB("DGEMM_QUAD_B", kase.quadB, 0);
  EnvOverride park("DGEMM_PARK", kase.park, 0);
  DGEMM_PREPARE_BUNDLE(bundle, kase.m, kase.n, kase.ks, kase.inPlace);
  if (kase.blockM > 0)
    ASSERT_EQ(preparedConfig_.blockM, kase.blockM)
        << "DGEMM_BLOCK_M was not applied: " << preparedConfig_.entryName();
  if (kase.blockN > 0)
    ASSERT_EQ(preparedConfig_.blockN, kase.blockN)
        << "DGEMM_BLOCK_N was not applied: " << preparedConfig_.entryName();
  if (kase.expectQuadB >= 0)
    ASSERT_EQ(preparedConfig_.quadB, kase.expectQuadB)
        << preparedConfig_.entryName();
  if (kase.expectPark >= 0)
    ASSERT_EQ(preparedConfig_.epilogue == dgemm::heuristics::Epilogue::Parked,
              kase.expectPark == 1)
        << preparedConfig_.entryName();
  const uint64_t seed = testSeed();
  HostProblem p = makeRandomProblem(kase.m, kase.n, kase.ks, seed);
  DeviceProblem dev;
  ASSERT_TRUE(uploadProblem(p, kase.inPlace, dev));
  if (!kase.inPlace) {
    DGEMM_CU_ASSERT(driver().cuMemsetD32Async(
        dev.d.ptr(), kNaNBits, size_t(p.outputElems()), stream_));
  }
  uint64_t wsBytes =
      kGroupedWorkspaceBytes(p.m, p.n, int(p.groups()), p.ks.data());
  ASSERT_GT(wsBytes, 0u);
  DeviceBuffer workspace;
  ASSERT_TRUE(workspace.allocate(wsBytes));

  DGEMM_ASSERT_LAUNCHED(kGroupedFp8GemmNtContiguous(
      makeArgs(p, dev, workspace.ptr(), wsBytes), stream_));
  DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));

  std::vector<float> d(size_t(p.outputElems()));
  ASSERT_TRUE(dev.d.download(d.data(), d.size() * 4));
  int64_t nonFinite = 0;
  for (float x : d)
    nonFinite += !std::isfinite(x);
  EXPECT_EQ(nonFinite, 0) << "outputs left unwritten (NaN poison) or broken";

  std::vector<int64_t> rows = referenceRows(p, seed);
  Comparison cmp = compareOutput(p, d, rows, referenceOutput(p, rows));
  for (size_t g = 0; g < cmp.groupDiff.size(); ++g)
    EXPECT_LT(cmp.groupDiff[g], kMaxDiff)
        << "group " << g << " (K = " << p.ks[g] << ")";
  EXPECT_EQ(cmp.emptyGroupMismatches, 0)
      << "groups with K = 0 must get d = c exactly";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, KGroupedGemmTest,
    ::testing::Combine(::testing::Values(Bundle::Real, Bundle::Reference),
                       ::testing::ValuesIn(gemmCases())),
    [](const auto &info) {
      return bundleName(std::get<0>(info.param)) + "_" +
             std::get<1>(info.param).name;
    });

/// The raster band (DGEMM_RASTER_BAND, kernel parameter 14) reorders the
/// tiles over the CTAs, never what a tile computes: every band gives d
/// bitwise equal to row order (band 0), which matches the reference. Bands
/// 3 and 5 leave a narrower last band; 65536 is clamped to the m-block
/// count.
struct BandCase {
  const char *name;
  int64_t m, n;
  std::vector<int32_t> ks;
  bool inPlace;
  /// The park the launched kernel must have (-1: not checked).
  int expectPark = -1;
};

void PrintTo(const BandCase &kase, std::ostream *os) { *os << kase.name; }

class RasterBandTest
    : public GpuTest,
      public ::testing::WithParamInterface<std::tuple<Bundle, BandCase>> {};

TEST_P(RasterBandTest, EveryBandIsBitwiseRowOrder) {
  const auto &[bundle, kase] = GetParam();
  DGEMM_PREPARE_BUNDLE(bundle, kase.m, kase.n, kase.ks, kase.inPlace);
  if (kase.expectPark >= 0)
    ASSERT_EQ(preparedConfig_.epilogue == dgemm::heuristics::Epilogue::Parked,
              kase.expectPark == 1)
        << preparedConfig_.entryName();
  const uint64_t seed = testSeed();
  HostProblem p = makeRandomProblem(kase.m, kase.n, kase.ks, seed);
  uint64_t wsBytes =
      kGroupedWorkspaceBytes(p.m, p.n, int(p.groups()), p.ks.data());
  DeviceBuffer workspace;
  ASSERT_TRUE(workspace.allocate(wsBytes));
  std::vector<float> rowOrder;
  for (int band : {0, 1, 3, 5, 16, 65536}) {
    SCOPED_TRACE("DGEMM_RASTER_BAND=" + std::to_string(band));
    EnvOverride env("DGEMM_RASTER_BAND", band, 0);
    DeviceProblem dev;
    ASSERT_TRUE(uploadProblem(p, kase.inPlace, dev));
    if (!kase.inPlace) {
      DGEMM_CU_ASSERT(driver().cuMemsetD32Async(
          dev.d.ptr(), kNaNBits, size_t(p.outputElems()), stream_));
    }
    DGEMM_ASSERT_LAUNCHED(kGroupedFp8GemmNtContiguous(
        makeArgs(p, dev, workspace.ptr(), wsBytes), stream_));
    DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
    std::vector<float> d(size_t(p.outputElems()));
    ASSERT_TRUE(dev.d.download(d.data(), d.size() * 4));
    if (band == 0) {
      std::vector<int64_t> rows = referenceRows(p, seed);
      Comparison cmp = compareOutput(p, d, rows, referenceOutput(p, rows));
      for (size_t g = 0; g < cmp.groupDiff.size(); ++g)
        ASSERT_LT(cmp.groupDiff[g], kMaxDiff) << "group " << g;
      rowOrder = std::move(d);
      continue;
    }
    size_t differing = 0;
    for (size_t i = 0; i < d.size(); ++i)
      differing += std::memcmp(&d[i], &rowOrder[i], 4) != 0;
    EXPECT_EQ(differing, 0u) << "of " << d.size() << " outputs";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Bands, RasterBandTest,
    ::testing::Combine(
        ::testing::Values(Bundle::Real, Bundle::Reference),
        ::testing::Values(
            // Ragged M and N, an empty group, several tiles per CTA.
            BandCase{"RaggedSeparateC", 1000, 1000, {384, 0, 1280, 128},
                     false},
            BandCase{"RaggedInPlace", 1000, 1000, {384, 0, 1280, 128}, true},
            // In place with 16-block groups beside a short and an empty
            // one: the kernel that parks its tiles.
            BandCase{"RaggedParked", 1000, 1000,
                     {384, 0, 2048, 2048, 2048, 2048}, true, 1},
            // The large tiles, with CTA pairs where the heuristics take
            // them (the band counts pairs of m-blocks then).
            BandCase{"LargeSeparateC", 4096, 7168, {1024, 2048, 0, 1152},
                     false})),
    [](const auto &info) {
      return bundleName(std::get<0>(info.param)) + "_" +
             std::get<1>(info.param).name;
    });

/// Launch-path behaviour, on one small problem.
class LaunchTest : public GpuTest,
                   public ::testing::WithParamInterface<Bundle> {
protected:
  static constexpr int64_t kM = 512, kN = 512;
  const std::vector<int32_t> ks_ = {256, 128, 0, 384};
};

TEST_P(LaunchTest, InternalWorkspaceMatchesCallerWorkspace) {
  DGEMM_PREPARE_BUNDLE(GetParam(), kM, kN, ks_, false);
  HostProblem p = makeRandomProblem(kM, kN, ks_, testSeed());
  DeviceProblem dev;
  ASSERT_TRUE(uploadProblem(p, false, dev));
  uint64_t wsBytes = kGroupedWorkspaceBytes(kM, kN, 4, p.ks.data());
  DeviceBuffer workspace;
  ASSERT_TRUE(workspace.allocate(wsBytes));
  std::vector<float> expected(size_t(p.outputElems())), actual(expected.size());

  DGEMM_ASSERT_LAUNCHED(kGroupedFp8GemmNtContiguous(
      makeArgs(p, dev, workspace.ptr(), wsBytes), stream_));
  DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
  ASSERT_TRUE(dev.d.download(expected.data(), expected.size() * 4));

  // Twice: the second call reuses the buffer the first one allocated.
  for (int call = 0; call < 2; ++call) {
    DGEMM_CU_ASSERT(driver().cuMemsetD32Async(
        dev.d.ptr(), kNaNBits, size_t(p.outputElems()), stream_));
    DGEMM_ASSERT_LAUNCHED(
        kGroupedFp8GemmNtContiguous(makeArgs(p, dev, 0, 0), stream_));
    DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
    ASSERT_TRUE(dev.d.download(actual.data(), actual.size() * 4));
    EXPECT_EQ(0,
              std::memcmp(expected.data(), actual.data(), expected.size() * 4))
        << "call " << call;
  }
}

TEST_P(LaunchTest, ReplaysFromCudaGraph) {
  DGEMM_PREPARE_BUNDLE(GetParam(), kM, kN, ks_, false);
  HostProblem p = makeRandomProblem(kM, kN, ks_, testSeed());
  DeviceProblem dev;
  ASSERT_TRUE(uploadProblem(p, false, dev));
  uint64_t wsBytes = kGroupedWorkspaceBytes(kM, kN, 4, p.ks.data());
  DeviceBuffer workspace;
  ASSERT_TRUE(workspace.allocate(wsBytes));
  KGroupedArgs args = makeArgs(p, dev, workspace.ptr(), wsBytes);
  std::vector<float> expected(size_t(p.outputElems())), actual(expected.size());

  // A direct launch first: it also loads the module outside the capture.
  DGEMM_ASSERT_LAUNCHED(kGroupedFp8GemmNtContiguous(args, stream_));
  DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
  ASSERT_TRUE(dev.d.download(expected.data(), expected.size() * 4));

  DGEMM_CU_ASSERT(
      driver().cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_GLOBAL));
  Status captured = kGroupedFp8GemmNtContiguous(args, stream_);
  // The runtime refuses its own allocation while capturing.
  Status refused = kGroupedFp8GemmNtContiguous(makeArgs(p, dev, 0, 0), stream_);
  CUgraph graph = nullptr;
  DGEMM_CU_ASSERT(driver().cuStreamEndCapture(stream_, &graph));
  ASSERT_TRUE(captured.ok()) << captured.message();
  EXPECT_EQ(refused.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(refused.message(), HasSubstr("'workspace'"));
  CUgraphExec exec = nullptr;
  DGEMM_CU_ASSERT(driver().cuGraphInstantiateWithFlags(&exec, graph, 0));

  for (int replay = 0; replay < 3; ++replay) {
    DGEMM_CU_ASSERT(driver().cuMemsetD32Async(
        dev.d.ptr(), kNaNBits, size_t(p.outputElems()), stream_));
    DGEMM_CU_ASSERT(driver().cuGraphLaunch(exec, stream_));
    DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
    ASSERT_TRUE(dev.d.download(actual.data(), actual.size() * 4));
    EXPECT_EQ(0,
              std::memcmp(expected.data(), actual.data(), expected.size() * 4))
        << "replay " << replay;
  }
  driver().cuGraphExecDestroy(exec);
  driver().cuGraphDestroy(graph);
}

TEST_P(LaunchTest, ConcurrentCallersGetIdenticalResults) {
  DGEMM_PREPARE_BUNDLE(GetParam(), kM, kN, ks_, false);
  HostProblem p = makeRandomProblem(kM, kN, ks_, testSeed());
  constexpr int kThreads = 4;
  DeviceProblem dev[kThreads];
  for (DeviceProblem &one : dev)
    ASSERT_TRUE(uploadProblem(p, false, one));
  Status results[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      // Each thread: its own stream, the runtime's own workspace, and the
      // context made current only through the stream.
      CUstream stream = nullptr;
      if (driver().cuCtxSetCurrent(context_) != CUDA_SUCCESS ||
          driver().cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) !=
              CUDA_SUCCESS) {
        results[t] = Status::error(ErrorCode::CudaError, "stream setup");
        return;
      }
      driver().cuCtxSetCurrent(nullptr);
      for (int call = 0; call < 8 && results[t].ok(); ++call)
        results[t] =
            kGroupedFp8GemmNtContiguous(makeArgs(p, dev[t], 0, 0), stream);
      driver().cuStreamSynchronize(stream);
      driver().cuStreamDestroy(stream);
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : results)
    DGEMM_ASSERT_LAUNCHED(s);
  std::vector<float> first(size_t(p.outputElems())), other(first.size());
  ASSERT_TRUE(dev[0].d.download(first.data(), first.size() * 4));
  std::vector<int64_t> rows = referenceRows(p, 1);
  Comparison cmp = compareOutput(p, first, rows, referenceOutput(p, rows));
  for (double diff : cmp.groupDiff)
    EXPECT_LT(diff, kMaxDiff);
  for (int t = 1; t < kThreads; ++t) {
    ASSERT_TRUE(dev[t].d.download(other.data(), other.size() * 4));
    EXPECT_EQ(0, std::memcmp(first.data(), other.data(), first.size() * 4))
        << "thread " << t;
  }
}

TEST_P(LaunchTest, WorkspaceTooSmallIsRejected) {
  DGEMM_PREPARE_BUNDLE(GetParam(), kM, kN, ks_, false);
  HostProblem p = makeRandomProblem(kM, kN, ks_, testSeed());
  DeviceProblem dev;
  ASSERT_TRUE(uploadProblem(p, false, dev));
  DeviceBuffer workspace;
  ASSERT_TRUE(workspace.allocate(128));
  Status s = kGroupedFp8GemmNtContiguous(makeArgs(p, dev, workspace.ptr(), 128),
                                         stream_);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'workspace_bytes' must be >= "));
}

INSTANTIATE_TEST_SUITE_P(Bundles, LaunchTest,
                         ::testing::Values(Bundle::Real, Bundle::Reference),
                         [](const auto &info) {
                           return bundleName(info.param);
                         });

/// dgemm_k_grouped_kernel_info names the kernel the call launches and what
/// the driver compiled it to; the bundle's kernels spill nothing.
class KernelInfoTest : public GpuTest,
                       public ::testing::WithParamInterface<Bundle> {};

TEST_P(KernelInfoTest, NamesTheLaunchedKernelAndItsResources) {
  struct Call {
    int64_t m, n;
    std::vector<int32_t> ks;
    bool inPlace;
  };
  for (const Call &call :
       {Call{2048, 2048, {256, 128, 128, 256}, true},
        Call{4096, 7168, {8192, 8576, 8704, 8832}, true},
        Call{4096, 7168, {2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048},
             false}}) {
    DGEMM_PREPARE_BUNDLE(GetParam(), call.m, call.n, call.ks, call.inPlace);
    KGroupedKernelInfo info;
    Status s = kGroupedKernelInfo(call.m, call.n, int(call.ks.size()),
                                  call.ks.data(), call.inPlace, info);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(info.entry, preparedConfig_.entryName());
    EXPECT_EQ(info.threads, 128 * (1 + preparedConfig_.mathWarpgroups));
    EXPECT_GT(info.numRegs, 0);
    EXPECT_LE(info.numRegs * info.threads, 65536);
    EXPECT_GT(info.dynamicSmemBytes, 0);
    EXPECT_GE(info.gridX, 1);
    EXPECT_LE(info.gridX, smCount_);
    // An SM90 part reports its memory, and the calibration is the one its
    // bandwidth selects (the H100's 3.35 TB/s, the H200's 4.8 TB/s).
    EXPECT_GT(info.memoryBandwidthGBps, 1000);
    dgemm::heuristics::Target bandwidth;
    bandwidth.memoryBandwidthGBps = info.memoryBandwidthGBps;
    EXPECT_EQ(info.calibration, dgemm::heuristics::calibrationName(
                                    dgemm::heuristics::calibrationFor(bandwidth)));
    std::printf("[ kernel info ] %s: memory %d GB/s, %s calibration, %d "
                "registers, %d B local\n",
                info.entry.c_str(), info.memoryBandwidthGBps,
                info.calibration.c_str(), info.numRegs, info.localBytes);
    if (GetParam() == Bundle::Real) {
      EXPECT_EQ(info.localBytes, 0) << info.entry << " uses local memory";
      EXPECT_LE(info.spillStoreBytes, 0) << info.entry;
      EXPECT_LE(info.spillLoadBytes, 0) << info.entry;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Bundles, KernelInfoTest,
                         ::testing::Values(Bundle::Real, Bundle::Reference),
                         [](const auto &info) {
                           return bundleName(info.param);
                         });

/// Broken bundles fail with messages, not crashes.
class BundleErrorTest : public GpuTest {
protected:
  /// Writes a bundle holding `ptx` and the selected config's .meta (edited
  /// by `editMeta`) and calls the GEMM on it.
  Status callWithBundle(const std::string &ptx,
                        const std::function<void(std::string &)> &editMeta) {
    std::vector<int32_t> ks = {128};
    HostProblem p = makeRandomProblem(256, 256, ks, 7);
    DeviceProblem dev;
    EXPECT_TRUE(uploadProblem(p, false, dev));
    dgemm::heuristics::Target target = deviceTarget();
    dgemm::heuristics::KernelConfig config =
        dgemm::heuristics::selectKGroupedConfig(
            dgemm::runtime::makeProblem(256, 256, 1, ks.data()), target);
    std::string meta = config.toMeta();
    editMeta(meta);
    dir_.write(config.entryName() + ".meta", meta);
    dir_.write(config.entryName() + ".ptx", ptx);
    EXPECT_TRUE(dgemm::runtime::writeBundleIndex(dir_.path()).ok());
    ScopedEnv env("DGEMM_KERNEL_DIR", dir_.path());
    return kGroupedFp8GemmNtContiguous(makeArgs(p, dev, 0, 0), stream_);
  }
  TempDir dir_;
};

TEST_F(BundleErrorTest, BadPtxReportsTheJitLog) {
  Status s = callWithBundle(".version 8.0\n.target sm_90a\n.address_size 64\n"
                            "this is not ptx\n",
                            [](std::string &) {});
  EXPECT_EQ(s.code(), ErrorCode::CudaError);
  EXPECT_THAT(s.message(), HasSubstr("cuModuleLoadDataEx"));
  EXPECT_THAT(s.message(), HasSubstr("JIT error log"));
}

TEST_F(BundleErrorTest, MetaDisagreeingWithHeuristicsIsRejected) {
  Status s = callWithBundle("", [](std::string &meta) {
    size_t at = meta.find("desc_slots=");
    meta.replace(at, meta.find('\n', at) - at, "desc_slots=7");
  });
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("key 'desc_slots' is 7"));
}

TEST_F(BundleErrorTest, MissingKernelIsKernelNotFound) {
  ScopedEnv env("DGEMM_KERNEL_DIR", dir_.path());
  std::vector<int32_t> ks = {128};
  HostProblem p = makeRandomProblem(256, 256, ks, 7);
  DeviceProblem dev;
  ASSERT_TRUE(uploadProblem(p, false, dev));
  Status s = kGroupedFp8GemmNtContiguous(makeArgs(p, dev, 0, 0), stream_);
  EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
  EXPECT_THAT(s.message(), HasSubstr(dir_.path()));
}

} // namespace
