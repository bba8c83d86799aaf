//===- CApiTest.cpp - The C ABI without a GPU -----------------------------===//

#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/ModuleCache.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <sys/resource.h>

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
  EXPECT_EQ(dgemm_k_grouped_kernel_info(2048, 2048, 2, ks.data(), 1, &info, err,
                                        sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'ks' must hold multiples of 128"));
  EXPECT_THAT(err, HasSubstr("got 100 for group 1"));
  EXPECT_EQ(dgemm_k_grouped_kernel_info(0, 2048, 2, ks.data(), 1, &info, err,
                                        sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'm' must be in [1, 2147483647]"));
  EXPECT_EQ(dgemm_k_grouped_kernel_info(2048, 2048, 0, ks.data(), 1, &info, err,
                                        sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'num_groups' must be in [1, "));
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

TEST(CApiTest, WorkspaceBytesOfImpossibleSizesIsZero) {
  // These aborted the process (an exception through extern "C").
  std::vector<int32_t> ks = {128};
  EXPECT_EQ(
      dgemm_k_grouped_workspace_bytes(int64_t(1) << 62, 128, 1, ks.data()), 0u);
  EXPECT_EQ(
      dgemm_k_grouped_workspace_bytes(128, int64_t(1) << 62, 1, ks.data()), 0u);
  EXPECT_EQ(dgemm_k_grouped_workspace_bytes(int64_t(1) << 40, int64_t(1) << 40,
                                            1, ks.data()),
            0u);
  // num_groups * m * n * 4 beyond 64 bits.
  std::vector<int32_t> many(4096, 0);
  EXPECT_EQ(dgemm_k_grouped_workspace_bytes(2147483644, 2147483644, 4096,
                                            many.data()),
            0u);
  // The largest sizes that are valid return without aborting.
  (void)dgemm_k_grouped_workspace_bytes(2147483644, 2147483644, 1, ks.data());
}

TEST(CApiTest, WorkspaceBytesOfBadKsIsZero) {
  // "0 if the sizes are invalid", as the header says.
  for (std::vector<int32_t> ks :
       {std::vector<int32_t>{-128}, std::vector<int32_t>{128, -256},
        std::vector<int32_t>{100}, std::vector<int32_t>{128, 129},
        std::vector<int32_t>{2147483520, 128}}) {
    EXPECT_EQ(dgemm_k_grouped_workspace_bytes(256, 256, int32_t(ks.size()),
                                              ks.data()),
              0u)
        << ks.back();
  }
  std::vector<int32_t> good = {2147483520};
  EXPECT_GT(dgemm_k_grouped_workspace_bytes(256, 256, 1, good.data()), 0u);
}

TEST(CApiTest, KernelInfoOfImpossibleSizesIsInvalidArgument) {
  char err[256];
  dgemm_kernel_info info;
  std::vector<int32_t> ks = {128};
  EXPECT_EQ(dgemm_k_grouped_kernel_info(int64_t(1) << 62, 128, 1, ks.data(), 0,
                                        &info, err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'm' must be in [1, 2147483647]"));
  EXPECT_EQ(dgemm_k_grouped_kernel_info(128, int64_t(1) << 40, 1, ks.data(), 1,
                                        &info, err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'n' must be in [1, 2147483647]"));
  std::vector<int32_t> big = {2147483520, 2147483520};
  EXPECT_EQ(dgemm_k_grouped_kernel_info(128, 128, 2, big.data(), 1, &info, err,
                                        sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'ks': sum(ks) must be <= 2147483647"));
  std::vector<int32_t> many(4096, 0);
  EXPECT_EQ(dgemm_k_grouped_kernel_info(2147483644, 2147483644, 4096,
                                        many.data(), 1, &info, err,
                                        sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("'num_groups' * 'm' * 'n' * 4"));
}

/// The process's virtual memory size in bytes (/proc/self/statm), 0 unknown.
uint64_t virtualMemoryBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * uint64_t(sysconf(_SC_PAGESIZE));
}

TEST(CApiDeathTest, ExceptionsBecomeAStatus) {
  // The host allocation of a call with 50 M groups fails under an address
  // space limit, throwing std::bad_alloc inside the runtime: the entry point
  // must return DGEMM_ERROR_INTERNAL (or refuse the sizes) rather than let
  // the exception abort the process. Run in a child so the limit stays there.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        constexpr int32_t kGroups = 50'000'000;
        std::vector<int32_t> ks(size_t(kGroups), 0);
        struct rlimit limit;
        limit.rlim_cur = limit.rlim_max = virtualMemoryBytes() + (128u << 20);
        setrlimit(RLIMIT_AS, &limit);
        char err[512] = "";
        int rc = dgemm_check_arguments(
            fake(0x100000), fake(0x200000), fake(0x300000), fake(0x400000),
            fake(0x10000000), fake(0x10000000), 4, 4, kGroups, ks.data(),
            static_cast<const int32_t *>(fake(0x500000)), nullptr, 0, err,
            sizeof(err));
        std::fprintf(stderr, "rc %d: %s\n", rc, err);
        bool named = rc != DGEMM_ERROR_INTERNAL ||
                     std::strstr(err, "dgemm_check_arguments failed inside "
                                      "the runtime") != nullptr;
        std::exit(named ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "rc ");
}

TEST(CApiTest, CheckArgumentsRejectsOverlappingOutputs) {
  // check()'s layout: a 0x100000, sfa 0x200000, b 0x300000, sfb 0x400000,
  // ks_device 0x500000, d 0x10000000 (64 MiB, 2048 x 2048 x 4 groups).
  std::vector<int32_t> ks = {256, 128, 128, 256};
  auto call = [&](void *a, void *d, void *c, const void *ksDevice,
                  void *workspace, char *err) {
    return dgemm_check_arguments(a, fake(0x200000), fake(0x300000),
                                 fake(0x400000), d, c, 2048, 2048, 4, ks.data(),
                                 static_cast<const int32_t *>(ksDevice),
                                 workspace, workspace ? 1 << 20 : 0, err, 256);
  };
  char err[256];
  void *d = fake(0x10000000);
  EXPECT_EQ(call(fake(0x100000), d, d, fake(0x500000), nullptr, err), DGEMM_OK)
      << err;
  // d over a, over ks_device.
  EXPECT_EQ(call(fake(0x10000000 + 4096), d, d, fake(0x500000), nullptr, err),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("arguments 'd' and 'a' must not overlap"));
  EXPECT_EQ(call(fake(0x100000), d, d, fake(0x10000000 + 64), nullptr, err),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("arguments 'd' and 'ks_device' must not overlap"));
  // The workspace over c (read) and over d (written).
  void *c = fake(0x20000000);
  EXPECT_EQ(call(fake(0x100000), d, c, fake(0x500000), fake(0x20000000), err),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("arguments 'workspace' and 'c' must not overlap"));
  EXPECT_EQ(call(fake(0x100000), d, c, fake(0x500000), fake(0x13ffff80), err),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("'workspace'"));
  EXPECT_THAT(err, HasSubstr("'d'"));
  // Just past d's end is disjoint.
  EXPECT_EQ(call(fake(0x100000), d, c, fake(0x500000), fake(0x14000000), err),
            DGEMM_OK)
      << err;
}

TEST(CApiTest, CheckArgumentsRejectsSumOfKBeyondInt32) {
  char err[256];
  EXPECT_EQ(check(2048, {2147483520, 128}, nullptr, 0, err, sizeof(err)),
            DGEMM_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(err, HasSubstr("argument 'ks_host': sum(K) must be <= "
                             "2147483647"));
}

TEST(CApiTest, VersionNamesTheAbi) {
  EXPECT_THAT(dgemm_runtime_version(), HasSubstr("kernel ABI 4"));
}

/// A call's arguments, laid out apart: a 0x100000, sfa 0x200000, b 0x300000,
/// sfb 0x400000, ks_device 0x500000, d 0x10000000, c 0x20000000, the
/// workspace 0x30000000.
struct Buffers {
  std::vector<int32_t> ks = {256, 128, 128, 256};
  dgemm::runtime::KGroupedArgs args = {
      fake(0x100000),
      fake(0x200000),
      fake(0x300000),
      fake(0x400000),
      fake(0x10000000),
      fake(0x20000000),
      2048,
      2048,
      4,
      ks.data(),
      static_cast<const int32_t *>(fake(0x500000)),
      fake(0x30000000),
      4096};
};

TEST(BufferRulesTest, SpansAreWhatTheKernelTouches) {
  Buffers f;
  std::vector<dgemm::runtime::DeviceSpan> spans;
  ASSERT_TRUE(dgemm::runtime::deviceSpans(f.args, 4096, spans).ok());
  std::map<std::string, uint64_t> bytes;
  for (const auto &span : spans)
    bytes[span.name] = span.bytes;
  EXPECT_EQ(bytes["a"], 2048u * 768);
  EXPECT_EQ(bytes["sfa"], 2048u * 6 * 4);
  EXPECT_EQ(bytes["b"], 2048u * 768);
  EXPECT_EQ(bytes["sfb"], 2048u * 6 * 4);
  EXPECT_EQ(bytes["c"], 4u * 2048 * 2048 * 4);
  EXPECT_EQ(bytes["d"], 4u * 2048 * 2048 * 4);
  EXPECT_EQ(bytes["ks_device"], 16u);
  EXPECT_EQ(bytes["workspace"], 4096u);
  // Without a known workspace size its span is left out.
  ASSERT_TRUE(dgemm::runtime::deviceSpans(f.args, 0, spans).ok());
  EXPECT_EQ(spans.size(), 7u);
}

TEST(BufferRulesTest, EndPastTheAddressSpaceIsRejected) {
  Buffers f;
  f.args.d = fake(~uintptr_t(0) - 0xfff);
  std::vector<dgemm::runtime::DeviceSpan> spans;
  dgemm::runtime::Status s = dgemm::runtime::deviceSpans(f.args, 0, spans);
  EXPECT_EQ(s.code(), dgemm::runtime::ErrorCode::InvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 'd'"));
  EXPECT_THAT(s.message(), HasSubstr("past the 64-bit address space"));
}

TEST(BufferRulesTest, EveryWrittenBufferAgainstEveryOther) {
  using dgemm::runtime::checkKGroupedBuffers;
  Buffers clean;
  ASSERT_TRUE(checkKGroupedBuffers(clean.args, 4096).ok());
  // Each buffer moved onto d, then onto the workspace.
  const char *names[] = {"a", "sfa", "b", "sfb", "c", "ks_device"};
  for (const char *written : {"d", "workspace"}) {
    for (const char *name : names) {
      Buffers f;
      const void *target =
          std::string(written) == "d" ? f.args.d : f.args.workspace;
      const void *inside = static_cast<const char *>(target) + 128;
      std::string arg = name;
      if (arg == "a")
        f.args.a = inside;
      else if (arg == "sfa")
        f.args.sfa = inside;
      else if (arg == "b")
        f.args.b = inside;
      else if (arg == "sfb")
        f.args.sfb = inside;
      else if (arg == "c")
        f.args.c = inside;
      else
        f.args.ksDevice = static_cast<const int32_t *>(inside);
      // c partly over d is checkKGroupedArgs's rule, not this one's.
      if (arg == "c" && std::string(written) == "d")
        continue;
      dgemm::runtime::Status s = checkKGroupedBuffers(f.args, 4096);
      EXPECT_EQ(s.code(), dgemm::runtime::ErrorCode::InvalidArgument)
          << name << " over " << written;
      EXPECT_THAT(s.message(),
                  HasSubstr("arguments '" + std::string(written) + "' and '" +
                            arg + "' must not overlap"));
    }
  }
  // d over the workspace: both written.
  Buffers f;
  f.args.workspace = static_cast<char *>(f.args.d) + 1024;
  dgemm::runtime::Status s = checkKGroupedBuffers(f.args, 4096);
  EXPECT_THAT(s.message(), HasSubstr("must not overlap (the kernel writes"));
  EXPECT_THAT(s.message(), HasSubstr("while it writes"));
  // An unknown workspace size skips its pairs (checked again once known).
  EXPECT_TRUE(checkKGroupedBuffers(f.args, 0).ok());
}

TEST(BufferRulesTest, InputsMayShareMemoryAndCMayBeD) {
  Buffers f;
  f.args.b = f.args.a; // A . A^T: both only read.
  f.args.sfb = f.args.sfa;
  f.args.c = f.args.d;
  EXPECT_TRUE(dgemm::runtime::checkKGroupedBuffers(f.args, 4096).ok());
}

TEST(BufferRulesTest, EmptyGroupsTouchNoOperandBytes) {
  // With every K zero the kernel reads nothing of a, b and the scales, so
  // they cannot collide with d.
  Buffers f;
  f.ks = {0, 0, 0, 0};
  f.args.ksHost = f.ks.data();
  f.args.a = static_cast<char *>(f.args.d) + 256;
  EXPECT_TRUE(dgemm::runtime::checkKGroupedBuffers(f.args, 4096).ok());
}

/// What the fake cuPointerGetAttribute knows of an address.
struct FakePointer {
  CUcontext context = nullptr;
  bool managed = false;
  bool pool = false;
  int ordinal = 0;
};
std::map<CUdeviceptr, FakePointer> gFakePointers;

CUresult fakeGetAttribute(void *data, CUpointer_attribute attribute,
                          CUdeviceptr ptr) {
  auto it = gFakePointers.find(ptr);
  if (it == gFakePointers.end())
    return CUDA_ERROR_INVALID_VALUE;
  const FakePointer &p = it->second;
  switch (attribute) {
  case CU_POINTER_ATTRIBUTE_CONTEXT:
    *static_cast<CUcontext *>(data) = p.context;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
    // The driver writes a 32-bit boolean.
    *static_cast<unsigned *>(data) = p.managed;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
    *static_cast<void **>(data) = p.pool ? fake(0x1234) : nullptr;
    return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
    *static_cast<int *>(data) = p.ordinal;
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult fakeCanAccessPeer(int *can, CUdevice device, CUdevice peer) {
  // Devices 0 and 1 are peers; device 2 is nobody's.
  *can = device != 2 && peer != 2;
  return CUDA_SUCCESS;
}

TEST(BufferContextTest, OnlyAnotherContextsMemoryIsRejected) {
  using dgemm::runtime::checkBufferContexts;
  CUcontext mine = static_cast<CUcontext>(fake(0xc0));
  CUcontext other = static_cast<CUcontext>(fake(0xc1));
  Buffers f;
  auto at = [&](const void *p) {
    return CUdeviceptr(reinterpret_cast<uintptr_t>(p));
  };
  gFakePointers.clear();
  for (const void *p : {f.args.a, f.args.sfa, f.args.b, f.args.sfb,
                        static_cast<const void *>(f.args.d), f.args.c,
                        static_cast<const void *>(f.args.ksDevice),
                        static_cast<const void *>(f.args.workspace)})
    gFakePointers[at(p)] = FakePointer{mine, false, false, 0};
  auto check = [&] {
    return checkBufferContexts(fakeGetAttribute, fakeCanAccessPeer, mine,
                               CUdevice(0), f.args, 4096);
  };
  EXPECT_TRUE(check().ok()) << check().message();

  // Another context on the same device: rejected, naming the argument.
  gFakePointers[at(f.args.sfb)].context = other;
  dgemm::runtime::Status s = check();
  EXPECT_EQ(s.code(), dgemm::runtime::ErrorCode::InvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("argument 'sfb' (0x400000)"));
  EXPECT_THAT(s.message(), HasSubstr("another CUDA context"));
  // ... unless managed or from a memory pool.
  gFakePointers[at(f.args.sfb)].managed = true;
  EXPECT_TRUE(check().ok());
  gFakePointers[at(f.args.sfb)] = FakePointer{other, false, true, 0};
  EXPECT_TRUE(check().ok());
  // No context (virtual memory management) or unknown to the driver: passes.
  gFakePointers[at(f.args.sfb)] = FakePointer{nullptr, false, false, 0};
  EXPECT_TRUE(check().ok());
  gFakePointers.erase(at(f.args.sfb));
  EXPECT_TRUE(check().ok());

  // Another device: a peer passes, a device that is no peer does not.
  gFakePointers[at(f.args.workspace)] = FakePointer{other, false, false, 1};
  EXPECT_TRUE(check().ok());
  gFakePointers[at(f.args.workspace)].ordinal = 2;
  s = check();
  EXPECT_THAT(s.message(), HasSubstr("argument 'workspace'"));
  EXPECT_THAT(s.message(), HasSubstr("cannot access as a peer"));
  // The workspace is only checked once its size is known.
  EXPECT_TRUE(checkBufferContexts(fakeGetAttribute, fakeCanAccessPeer, mine,
                                  CUdevice(0), f.args, 0)
                  .ok());
  // Without cuPointerGetAttribute the check is skipped.
  EXPECT_TRUE(
      checkBufferContexts(nullptr, nullptr, mine, CUdevice(0), f.args, 4096)
          .ok());
  gFakePointers.clear();
}

} // namespace
