//===- ConcurrencyGpuTest.cpp - Many host threads and streams at once -----===//
//
// Calls from several host threads at once, each on its own per-thread
// default stream, and calls interleaved on two streams without
// synchronizing between them, all with the runtime's own workspaces: every
// output must be bitwise the same as one call alone. And a buffer of
// another context than the stream's is refused before any launch. Skips
// without a usable device (GpuTest).
//
//===----------------------------------------------------------------------===//

#include "GpuTestUtils.h"

#include "dgemm/Runtime/KGroupedGemm.h"

#include <gmock/gmock.h>

#include <cstring>
#include <dlfcn.h>
#include <thread>
#include <vector>

using namespace dgemm::test;
using dgemm::runtime::ErrorCode;
using dgemm::runtime::KGroupedArgs;
using dgemm::runtime::kGroupedFp8GemmNtContiguous;
using dgemm::runtime::Status;
using ::testing::HasSubstr;

namespace {

constexpr double kMaxDiff = 1e-3;

class ConcurrencyTest : public GpuTest,
                        public ::testing::WithParamInterface<Bundle> {
protected:
  static constexpr int64_t kM = 512, kN = 512;
  const std::vector<int32_t> ks_ = {256, 128, 0, 384};

  /// The bundle, the problem, and d of one call alone on stream_ with the
  /// runtime's own workspace (checked against the reference). The caller
  /// returns if this skipped or failed.
  void launchAlone(HostProblem &p, std::vector<float> &d) {
    DGEMM_PREPARE_BUNDLE(GetParam(), kM, kN, ks_, false);
    p = makeRandomProblem(kM, kN, ks_, testSeed());
    DeviceProblem dev;
    ASSERT_TRUE(uploadProblem(p, false, dev));
    DGEMM_ASSERT_LAUNCHED(
        kGroupedFp8GemmNtContiguous(makeArgs(p, dev, 0, 0), stream_));
    DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
    d.resize(size_t(p.outputElems()));
    ASSERT_TRUE(dev.d.download(d.data(), d.size() * 4));
    std::vector<int64_t> rows = referenceRows(p, 1);
    Comparison cmp = compareOutput(p, d, rows, referenceOutput(p, rows));
    for (double diff : cmp.groupDiff)
      EXPECT_LT(diff, kMaxDiff);
  }
};

TEST_P(ConcurrencyTest, PerThreadDefaultStreamsGiveIdenticalResults) {
  // CU_STREAM_PER_THREAD is another stream in every thread: each needs a
  // workspace of its own.
  HostProblem p;
  std::vector<float> expected;
  launchAlone(p, expected);
  if (HasFatalFailure() || IsSkipped())
    return;

  constexpr int kThreads = 6;
  DeviceProblem dev[kThreads];
  for (DeviceProblem &one : dev)
    ASSERT_TRUE(uploadProblem(p, false, one));
  Status results[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      if (driver().cuCtxSetCurrent(context_) != CUDA_SUCCESS) {
        results[t] = Status::error(ErrorCode::CudaError, "cuCtxSetCurrent");
        return;
      }
      // Few: the reference kernel is slow.
      for (int call = 0; call < 6 && results[t].ok(); ++call)
        results[t] = kGroupedFp8GemmNtContiguous(makeArgs(p, dev[t], 0, 0),
                                                 CU_STREAM_PER_THREAD);
      if (CUresult r = driver().cuStreamSynchronize(CU_STREAM_PER_THREAD);
          r != CUDA_SUCCESS && results[t].ok())
        results[t] = Status::error(ErrorCode::CudaError,
                                   "cuStreamSynchronize(per-thread)");
    });
  for (std::thread &t : threads)
    t.join();
  for (const Status &s : results)
    DGEMM_ASSERT_LAUNCHED(s);
  std::vector<float> actual(expected.size());
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(dev[t].d.download(actual.data(), actual.size() * 4));
    EXPECT_EQ(0,
              std::memcmp(expected.data(), actual.data(), expected.size() * 4))
        << "thread " << t;
  }
}

TEST_P(ConcurrencyTest, InterleavedStreamsWithoutSynchronizing) {
  HostProblem p;
  std::vector<float> expected;
  launchAlone(p, expected);
  if (HasFatalFailure() || IsSkipped())
    return;

  CUstream second = nullptr;
  DGEMM_CU_ASSERT(driver().cuStreamCreate(&second, CU_STREAM_NON_BLOCKING));
  constexpr int kCalls = 8;
  // A d per call, so that nothing but the runtime's workspaces is shared.
  std::vector<DeviceProblem> dev(2 * kCalls);
  for (DeviceProblem &one : dev)
    ASSERT_TRUE(uploadProblem(p, false, one));
  Status status;
  for (int call = 0; call < 2 * kCalls && status.ok(); ++call)
    status = kGroupedFp8GemmNtContiguous(makeArgs(p, dev[call], 0, 0),
                                         call % 2 ? second : stream_);
  EXPECT_TRUE(cuOk(driver().cuStreamSynchronize(second), "sync second"));
  driver().cuStreamDestroy(second);
  DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
  DGEMM_ASSERT_LAUNCHED(status);
  std::vector<float> actual(expected.size());
  for (int call = 0; call < 2 * kCalls; ++call) {
    ASSERT_TRUE(dev[call].d.download(actual.data(), actual.size() * 4));
    EXPECT_EQ(0,
              std::memcmp(expected.data(), actual.data(), expected.size() * 4))
        << "call " << call;
  }
}

INSTANTIATE_TEST_SUITE_P(Bundles, ConcurrencyTest,
                         ::testing::Values(Bundle::Real, Bundle::Reference),
                         [](const auto &info) {
                           return bundleName(info.param);
                         });

class ContextCheckTest : public GpuTest {};

TEST_F(ContextCheckTest, BufferOfAnotherContextIsRefused) {
  // cuCtxCreate and cuCtxDestroy are not in the runtime's table.
  auto create = reinterpret_cast<PFN_cuCtxCreate_v3020>(
      dlsym(driver().libraryHandle, "cuCtxCreate_v2"));
  auto destroy = reinterpret_cast<PFN_cuCtxDestroy_v4000>(
      dlsym(driver().libraryHandle, "cuCtxDestroy_v2"));
  if (!create || !destroy ||
      !dlsym(driver().libraryHandle, "cuPointerGetAttribute"))
    GTEST_SKIP() << "the driver lacks cuCtxCreate_v2, cuCtxDestroy_v2 or "
                    "cuPointerGetAttribute";
  const std::vector<int32_t> ks = {128};
  HostProblem p = makeRandomProblem(128, 128, ks, testSeed());
  DeviceProblem dev;
  ASSERT_TRUE(uploadProblem(p, false, dev));

  // A buffer for `a` allocated in a second context on the same device.
  CUdevice device = 0;
  DGEMM_CU_ASSERT(driver().cuCtxGetDevice(&device));
  CUcontext other = nullptr;
  DGEMM_CU_ASSERT(create(&other, 0, device)); // made current
  CUdeviceptr foreign = 0;
  CUresult allocated = driver().cuMemAlloc(&foreign, p.a.size());
  CUcontext popped = nullptr;
  driver().cuCtxPopCurrent(&popped);
  DGEMM_CU_ASSERT(driver().cuCtxSetCurrent(context_));
  if (allocated == CUDA_SUCCESS) {
    KGroupedArgs args = makeArgs(p, dev, 0, 0);
    args.a = reinterpret_cast<const void *>(foreign);
    Status s = kGroupedFp8GemmNtContiguous(args, stream_);
    EXPECT_EQ(s.code(), ErrorCode::InvalidArgument) << s.message();
    EXPECT_THAT(s.message(), HasSubstr("argument 'a'"));
    EXPECT_THAT(s.message(), HasSubstr("another CUDA context"));
    // The same call with the stream's own buffer is not refused for it.
    Status own = kGroupedFp8GemmNtContiguous(makeArgs(p, dev, 0, 0), stream_);
    EXPECT_THAT(own.message(), ::testing::Not(HasSubstr("context")));
    DGEMM_CU_ASSERT(driver().cuStreamSynchronize(stream_));
  }
  destroy(other); // frees `foreign` with it
  DGEMM_CU_ASSERT(driver().cuCtxSetCurrent(context_));
  ASSERT_EQ(allocated, CUDA_SUCCESS) << "cuMemAlloc in the second context";
}

} // namespace
