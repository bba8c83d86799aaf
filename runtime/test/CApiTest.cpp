//===- CApiTest.cpp - The C ABI without a GPU -----------------------------===//

#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/ModuleCache.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using ::testing::HasSubstr;

namespace {

void *fake(uintptr_t address) { return reinterpret_cast<void *>(address); }

int check(int64_t m, const std::vector<int32_t> &ks, void *workspace,
          uint64_t workspaceBytes, char *err, uint64_t errLen) {
  return dgemm_check_arguments(
      fake(0x100000), fake(0x200000), fake(0x300000), fake(0x400000),
      fake(0x10000000), fake(0x10000000), m, 2048, int32_t(ks.size()),
      ks.data(), static_cast<const int32_t *>(fake(0x500000)), workspace,
      workspaceBytes, err, errLen);
}

TEST(CApiTest, CheckArgumentsAcceptsValidCall) {
  char err[256] = "unchanged";
  EXPECT_EQ(check(2048, {256, 128, 128, 256}, nullptr, 0, err, sizeof(err)),
            DGEMM_OK);
  EXPECT_STREQ(err, "");
}

TEST(CApiTest, CheckArgumentsReportsViolation) {
  char err[256];
  EXPECT_EQ(check(2050, {256}, nullptr, 0, err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'm' must be a multiple of 4"));
}

TEST(CApiTest, CheckArgumentsChecksWorkspaceSize) {
  std::vector<int32_t> ks = {256, 128, 128, 256};
  char err[256];
  EXPECT_EQ(check(2048, ks, fake(0x800000), 256, err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("'workspace_bytes'"));
}

TEST(CApiTest, MessageIsTruncatedAndTerminated) {
  char err[8];
  std::memset(err, 'x', sizeof(err));
  EXPECT_EQ(check(2, {128}, nullptr, 0, err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::strlen(err), 7u);
  EXPECT_STREQ(err, "argumen");
}

TEST(CApiTest, NullErrorBufferIsAllowed) {
  EXPECT_EQ(check(2, {128}, nullptr, 0, nullptr, 100),
            DGEMM_ERROR_INVALID_ARGUMENT);
  char err[1] = {'x'};
  EXPECT_EQ(check(2, {128}, nullptr, 0, err, 0), DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(err[0], 'x');
}

TEST(CApiTest, SetKernelDir) {
  dgemm::test::ScopedEnv unset("DGEMM_KERNEL_DIR", std::nullopt);
  std::string dir;
  EXPECT_EQ(dgemm_set_kernel_dir("/some/bundle"), DGEMM_OK);
  ASSERT_TRUE(dgemm::runtime::resolveKernelDir(dir).ok());
  EXPECT_EQ(dir, "/some/bundle");
  EXPECT_EQ(dgemm_set_kernel_dir(nullptr), DGEMM_OK);
  dgemm::runtime::Status s = dgemm::runtime::resolveKernelDir(dir);
  EXPECT_NE(dir, "/some/bundle");
}

TEST(CApiTest, KernelInfoRejectsBadSizesBeforeTheDriver) {
  char err[256];
  dgemm_kernel_info info;
  std::vector<int32_t> ks = {256, 100};
  EXPECT_EQ(dgemm_k_grouped_kernel_info(2048, 2048, 2, ks.data(), 1, &info,
                                        err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'ks' must hold multiples of 128"));
  EXPECT_THAT(err, HasSubstr("got 100 for group 1"));
  EXPECT_EQ(dgemm_k_grouped_kernel_info(0, 2048, 2, ks.data(), 1, &info, err,
                                        sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'm' must be >= 1"));
  EXPECT_EQ(dgemm_k_grouped_kernel_info(2048, 2048, 0, ks.data(), 1, &info,
                                        err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'num_groups' must be >= 1"));
  EXPECT_EQ(dgemm_k_grouped_kernel_info(2048, 2048, 1, nullptr, 1, &info, err,
                                        sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'ks' must not be null"));
  EXPECT_EQ(dgemm_k_grouped_kernel_info(2048, 2048, 1, ks.data(), 1, nullptr,
                                        err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'info' must not be null"));
}

TEST(CApiTest, SpillBytesFromTheJitLog) {
  int stores = 0, loads = 0;
  dgemm::runtime::parseSpillBytes(
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "    16 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers\n",
      stores, loads);
  EXPECT_EQ(stores, 12);
  EXPECT_EQ(loads, 8);
  dgemm::runtime::parseSpillBytes(
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
      stores, loads);
  EXPECT_EQ(stores, 0);
  EXPECT_EQ(loads, 0);
  // No such line (an empty log, as when the driver's JIT cache served the
  // module), or a malformed one: not reported.
  dgemm::runtime::parseSpillBytes("", stores, loads);
  EXPECT_EQ(stores, -1);
  EXPECT_EQ(loads, -1);
  dgemm::runtime::parseSpillBytes("x bytes spill stores, 4 bytes spill loads",
                                  stores, loads);
  EXPECT_EQ(stores, -1);
  dgemm::runtime::parseSpillBytes("4 bytes spill stores, 4x bytes spill loads",
                                  stores, loads);
  EXPECT_EQ(stores, -1);
  EXPECT_EQ(loads, -1);
}

TEST(CApiTest, VersionNamesTheAbi) {
  EXPECT_THAT(dgemm_runtime_version(), HasSubstr("kernel ABI 3"));
}

} // namespace
