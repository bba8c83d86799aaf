//===- GpuTestUtils.h - Device fixture and host reference -------*- C++ -*-===//
//
// Shared by the GPU tests: a fixture that skips without a usable device,
// device buffers over the runtime's own driver table, operand generation in
// the layout of docs/KernelABI.md, and a host reference computed from the
// exact decoded FP8 values.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_TEST_GPUTESTUTILS_H
#define DGEMM_RUNTIME_TEST_GPUTESTUTILS_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Driver.h"
#include "dgemm/Runtime/KGroupedGemm.h"

#include "Fp8.h"
#include "TestUtils.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dgemm {
namespace test {

/// The driver table for tests; valid while a GpuTest runs.
const runtime::DriverApi &driver();

/// Success, or the failed call and the driver's description of `result`.
::testing::AssertionResult cuOk(CUresult result, const char *what);

#define DGEMM_CU_ASSERT(call) ASSERT_TRUE(::dgemm::test::cuOk((call), #call))

/// Skips the test when the bundle lacks the kernel; fails on other errors.
#define DGEMM_ASSERT_LAUNCHED(expr)                                            \
  do {                                                                         \
    ::dgemm::runtime::Status launchStatus = (expr);                            \
    if (launchStatus.code() == ::dgemm::runtime::ErrorCode::KernelNotFound)    \
      GTEST_SKIP() << "kernel bundle lacks the kernel: "                       \
                   << launchStatus.message();                                  \
    ASSERT_TRUE(launchStatus.ok()) << launchStatus.message();                  \
  } while (0)

/// GpuTest::prepareBundle, skipping the test when it says so.
#define DGEMM_PREPARE_BUNDLE(bundle, m, n, ks, inPlace)                        \
  do {                                                                         \
    std::string skipReason =                                                   \
        prepareBundle((bundle), (m), (n), (ks), (inPlace));                    \
    if (!skipReason.empty())                                                   \
      GTEST_SKIP() << skipReason;                                              \
  } while (0)

/// A device allocation (cuMemAlloc) freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  /// Allocates `bytes` (at least 1); false (with a test failure) on error.
  bool allocate(size_t bytes);
  bool upload(const void *host, size_t bytes);
  bool download(void *host, size_t bytes) const;
  template <typename T> bool upload(const std::vector<T> &host) {
    return allocate(host.size() * sizeof(T)) &&
           upload(host.data(), host.size() * sizeof(T));
  }

  CUdeviceptr ptr() const { return ptr_; }
  template <typename T> T *as() const { return reinterpret_cast<T *>(ptr_); }
  size_t bytes() const { return bytes_; }

private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

/// Where the kernels come from.
enum class Bundle {
  /// The bundle the runtime finds on its own ($DGEMM_KERNEL_DIR, ...).
  Real,
  /// A temporary bundle holding dgemm_reference_kgrouped (TestKernels.cu)
  /// under the entry name the heuristics select.
  Reference,
};

std::string bundleName(Bundle bundle);

/// Readable test parameter values in test listings (and ctest names).
inline void PrintTo(Bundle bundle, std::ostream *os) {
  *os << bundleName(bundle);
}

/// Runs with device 0's primary context current and a non-blocking stream;
/// skips when there is no driver, no device, or the device is not sm_90.
class GpuTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  /// Prepares `bundle` for a problem: for Bundle::Reference writes the
  /// reference kernel for its configuration into a temporary bundle and
  /// points DGEMM_KERNEL_DIR at it. Returns "" or why the test must skip.
  /// `inPlace` (c is d) as the launch will be: it can select another kernel.
  std::string prepareBundle(Bundle bundle, int64_t m, int64_t n,
                            const std::vector<int32_t> &ks, bool inPlace);

  /// The heuristics' target the runtime builds for the current context's
  /// device (runtime::targetFor: the memory bandwidth selects the
  /// calibration); a failed device query fails the test.
  heuristics::Target deviceTarget();

  /// The configuration the last prepareBundle expects the runtime to launch.
  heuristics::KernelConfig preparedConfig_;
  CUstream stream_ = nullptr;
  CUcontext context_ = nullptr;
  int smCount_ = 0;
  std::unique_ptr<ScopedEnv> bundleEnv_;
};

/// A k-grouped problem on the host, in the kernel's layout.
struct HostProblem {
  int64_t m = 0, n = 0;
  std::vector<int32_t> ks;
  int64_t sumK = 0;
  std::vector<uint8_t> a, b;   // FP8 codes, sum(K) * m and sum(K) * n
  std::vector<float> sfa, sfb; // (sum(K) / 128) x m and x n
  std::vector<float> c;        // G x m x n; empty means zeros

  int64_t groups() const { return int64_t(ks.size()); }
  int64_t outputElems() const { return groups() * m * n; }
};

/// Random FP8 operands (|values| in [0.25, 3.75]), scales in [1/16, 3/16),
/// c uniform in [-1, 1) unless `zeroC` (every third element of an empty
/// group -0.0); fully determined by `seed`.
HostProblem makeRandomProblem(int64_t m, int64_t n, std::vector<int32_t> ks,
                              uint64_t seed, bool zeroC = false);

/// Rows the reference checks: all when the problem is small, else 256 rows
/// (first and last, tile edges, and seeded random ones).
std::vector<int64_t> referenceRows(const HostProblem &p, uint64_t seed);

/// The reference output for `rows` (all groups, all columns), FP64
/// accumulation of FP32 128-element dot products of the decoded values,
/// scaled by sfa and sfb, plus c. Laid out [g][row index][n]. Multithreaded.
std::vector<double> referenceOutput(const HostProblem &p,
                                    const std::vector<int64_t> &rows);

/// DeepGEMM's metric 1 - 2 sum(x y) / sum(x^2 + y^2) per group between the
/// device output `d` (full G x m x n) at `rows` and `ref`; also counts
/// non-finite outputs.
struct Comparison {
  std::vector<double> groupDiff;
  int64_t nonFinite = 0;
  /// Elements of groups with K = 0 that are not bitwise equal to c.
  int64_t emptyGroupMismatches = 0;
};
Comparison compareOutput(const HostProblem &p, const std::vector<float> &d,
                         const std::vector<int64_t> &rows,
                         const std::vector<double> &ref);

/// Uploads the operands; d is allocated (and, unless `inPlace`, c uploaded
/// separately). With `inPlace` d starts as c.
struct DeviceProblem {
  DeviceBuffer a, b, sfa, sfb, c, d, ks;
  bool inPlace = false;
  const float *cPtr() const { return inPlace ? d.as<float>() : c.as<float>(); }
};
::testing::AssertionResult uploadProblem(const HostProblem &p, bool inPlace,
                                         DeviceProblem &dev);

/// runtime::KGroupedArgs for `dev` with the given workspace.
runtime::KGroupedArgs makeArgs(const HostProblem &p, const DeviceProblem &dev,
                               CUdeviceptr workspace, uint64_t workspaceBytes);

/// PTX of TestKernels.cu, or "" if it was not built (no nvcc).
std::string testKernelsPtx();

/// A seed derived from the running test's full name.
uint64_t testSeed();

} // namespace test
} // namespace dgemm

#endif // DGEMM_RUNTIME_TEST_GPUTESTUTILS_H
