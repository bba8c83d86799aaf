//===- DriverTest.cpp - Loading the driver fails cleanly ------------------===//

#include "dgemm/Runtime/Driver.h"
#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace dgemm::runtime;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

TEST(DriverTest, MissingLibraryIsACleanError) {
  DriverApi api;
  Status s = loadDriverFrom("libcuda-that-does-not-exist.so.1", api);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::NoDriver);
  EXPECT_THAT(s.message(), StartsWith("no CUDA driver/device: "));
  EXPECT_THAT(s.message(), HasSubstr("libcuda-that-does-not-exist.so.1"));
}

TEST(DriverTest, LibraryWithoutCudaSymbolsIsACleanError) {
  // libm is on every Linux system and has no cuGetProcAddress.
  DriverApi api;
  Status s = loadDriverFrom("libm.so.6", api);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::NoDriver);
  EXPECT_THAT(s.message(), HasSubstr("cuGetProcAddress"));
}

TEST(DriverTest, ProcessDriverLoadsOrExplainsWhy) {
  const DriverApi *api = nullptr;
  Status first = getDriver(api);
  Status second = getDriver(api);
  EXPECT_EQ(first.code(), second.code()) << "loading is done once";
  if (first.ok()) {
    ASSERT_NE(api, nullptr);
    EXPECT_GE(api->driverVersion, 12000);
    return;
  }
  EXPECT_EQ(api, nullptr);
  EXPECT_EQ(first.code(), ErrorCode::NoDriver);
  EXPECT_THAT(first.message(), StartsWith("no CUDA driver/device: "));
}

TEST(DriverTest, LaunchWithoutDriverReportsIt) {
  const DriverApi *api = nullptr;
  Status driver = getDriver(api);
  if (driver.ok())
    GTEST_SKIP() << "a CUDA driver is present: the GPU tests cover launches";
  // Valid-looking arguments: validation passes, then the driver is needed.
  std::vector<int32_t> ks = {128};
  char err[512] = "unchanged";
  // Apart: d may overlap no other buffer.
  auto p = [](uintptr_t mib) { return reinterpret_cast<void *>(mib << 20); };
  int code = dgemm_k_grouped_fp8_gemm_nt_contiguous(
      p(1), p(2), p(3), p(4), p(5), p(5), 128, 128, 1, ks.data(),
      reinterpret_cast<int32_t *>(p(6)), nullptr, 0, nullptr, err, sizeof(err));
  EXPECT_EQ(code, DGEMM_ERROR_NO_DRIVER);
  EXPECT_EQ(std::string(err), driver.message());
  EXPECT_THAT(err, HasSubstr("libcuda.so.1"));
}

} // namespace
