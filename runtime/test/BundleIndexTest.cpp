//===- BundleIndexTest.cpp - index.txt checks, cubin or PTX ---------------===//
//
// A bundle's index.txt (written last by dgemm-translate) is checked before a
// kernel loads: the bundle is complete, the kernel is listed, its files
// match their checksums. The cubin is loaded where the index lists one; the
// PTX is JIT-compiled only otherwise, and only by a driver new enough for its
// ISA. Host only: bundles are fabricated and the driver is a fake that
// records what it was handed.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Heuristics/Bf16Config.h"
#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/ModuleCache.h"
#include "dgemm/Runtime/dgemm_runtime.h"

#include "TestUtils.h"

#include <gmock/gmock.h>

#include <atomic>
#include <string>

using namespace dgemm::runtime;
using dgemm::heuristics::KernelConfig;
using dgemm::test::TempDir;
using ::testing::HasSubstr;

namespace {

// What the fake driver was last handed.
std::string gImage;
unsigned gOptionCount = 0;
std::atomic<uintptr_t> gNextContext{0xb1d0000};

CUresult fakeModuleLoadDataEx(CUmodule *module, const void *image,
                              unsigned int count, CUjit_option *, void **) {
  gImage = static_cast<const char *>(image);
  gOptionCount = count;
  *module = reinterpret_cast<CUmodule>(uintptr_t(1));
  return CUDA_SUCCESS;
}

DriverApi fakeDriver(int driverVersion) {
  DriverApi api;
  api.driverVersion = driverVersion;
  api.cuModuleLoadDataEx = fakeModuleLoadDataEx;
  api.cuModuleGetFunction = [](CUfunction *f, CUmodule m, const char *) {
    *f = reinterpret_cast<CUfunction>(m);
    return CUDA_SUCCESS;
  };
  api.cuModuleUnload = [](CUmodule) { return CUDA_SUCCESS; };
  api.cuFuncSetAttribute = [](CUfunction, CUfunction_attribute, int) {
    return CUDA_SUCCESS;
  };
  api.cuFuncGetAttribute = [](int *value, CUfunction_attribute attribute,
                              CUfunction) {
    *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
  };
  return api;
}

DeviceInfo fakeDevice() {
  DeviceInfo device;
  device.maxSmemOptin = dgemm::heuristics::kSm90MaxSmemPerBlock;
  device.smCount = 132;
  device.ccMajor = 9;
  return device;
}

KernelConfig someConfig() {
  KernelConfig config;
  config.stages = 4;
  return config;
}

constexpr const char *kPtx = "//\n.version 8.6\n.target sm_90a\n// ptx text\n";
constexpr const char *kCubin = "\x7f"
                               "ELF cubin image";

/// One kernel (the default configuration), PTX and optionally a cubin,
/// indexed.
class BundleIndexTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    dir_.write(entry() + ".meta", config_.toMeta());
    dir_.write(entry() + ".ptx", kPtx);
  }
  std::string entry() const { return config_.entryName(); }
  void index() { ASSERT_TRUE(writeBundleIndex(dir_.path()).ok()); }
  /// getKernel in a context no earlier load used (the cache is per context).
  Status load(int driverVersion = 13000) {
    DriverApi api = fakeDriver(driverVersion);
    CUcontext context = reinterpret_cast<CUcontext>(gNextContext.fetch_add(1));
    const LoadedKernel *kernel = nullptr;
    gImage.clear();
    Status s =
        getKernel(api, context, fakeDevice(), dir_.path(), config_, kernel);
    loaded_ = s.ok() ? kernel : nullptr;
    return s;
  }
  std::string indexText() const {
    std::string text;
    EXPECT_TRUE(readFile(dir_.path() + "/index.txt", text).ok());
    return text;
  }
  KernelConfig config_ = someConfig();
  TempDir dir_;
  const LoadedKernel *loaded_ = nullptr;
};

TEST_F(BundleIndexTest, CubinIsLoadedWithoutJit) {
  dir_.write(entry() + ".cubin", kCubin);
  index();
  Status s = load();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(gImage, kCubin);
  // The logs and verbosity, but no JIT target: a cubin is not compiled.
  EXPECT_EQ(gOptionCount, 5u);
  EXPECT_TRUE(loaded_->fromCubin);
  EXPECT_THAT(loaded_->ptxPath, HasSubstr(".cubin"));
}

TEST_F(BundleIndexTest, PtxIsJitCompiledWhenThereIsNoCubin) {
  index();
  EXPECT_THAT(indexText(), HasSubstr("cubin=none"));
  Status s = load();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(gImage, kPtx);
  EXPECT_EQ(gOptionCount, 6u);
  EXPECT_FALSE(loaded_->fromCubin);
}

TEST_F(BundleIndexTest, CubinNotInIndexIsIgnored) {
  // Only what the index lists counts: a stray cubin is not trusted.
  index();
  dir_.write(entry() + ".cubin", kCubin);
  Status s = load();
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(gImage, kPtx);
}

TEST_F(BundleIndexTest, DriverTooOldForThePtxIsSaid) {
  index();
  Status s = load(12040);
  EXPECT_EQ(s.code(), ErrorCode::NoDriver);
  EXPECT_THAT(s.message(), HasSubstr("supports CUDA 12.4"));
  EXPECT_THAT(s.message(), HasSubstr("PTX ISA 8.6"));
  EXPECT_THAT(s.message(), HasSubstr("CUDA 12.7 or newer"));
  EXPECT_TRUE(gImage.empty()) << "the JIT was called";
  s = load(12070);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST_F(BundleIndexTest, OldDriverLoadsTheCubin) {
  dir_.write(entry() + ".cubin", kCubin);
  index();
  Status s = load(12040);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(gImage, kCubin);
}

TEST_F(BundleIndexTest, CubinOfANewerMajorCudaIsRefusedOnAnOlderDriver) {
  dir_.write(entry() + ".cubin", kCubin);
  index();
  dir_.write("index.txt", indexText() + "ptxas=13.0\n");
  Status s = load(12090);
  EXPECT_EQ(s.code(), ErrorCode::NoDriver);
  EXPECT_THAT(s.message(), HasSubstr("supports CUDA 12.9"));
  EXPECT_THAT(s.message(), HasSubstr("ptxas of CUDA 13.0"));
  EXPECT_TRUE(gImage.empty()) << "the cubin was handed to the driver";
  s = load(13000);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(gImage, kCubin);
}

TEST_F(BundleIndexTest, MissingIndexIsKernelNotFoundWithTheCommand) {
  Status s = load();
  EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
  EXPECT_THAT(s.message(), HasSubstr("has no index.txt"));
  EXPECT_THAT(s.message(), HasSubstr("dgemm-translate --dgemm-to-ptx "
                                     "examples/kernels.mlir --bundle-dir=" +
                                     dir_.path() + " --bundle-all-candidates"));
}

TEST_F(BundleIndexTest, UnlistedKernelIsKernelNotFoundWithTheCommand) {
  index();
  KernelConfig other = config_;
  other.stages = config_.stages - 1;
  dir_.write(other.entryName() + ".meta", other.toMeta());
  dir_.write(other.entryName() + ".ptx", kPtx);
  config_ = other;
  Status s = load();
  EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
  EXPECT_THAT(s.message(), HasSubstr("does not list it"));
  EXPECT_THAT(s.message(), HasSubstr("--bundle-dir=" + dir_.path()));
}

TEST_F(BundleIndexTest, ChangedFileFailsItsChecksum) {
  dir_.write(entry() + ".cubin", kCubin);
  index();
  // A half-written cubin.
  dir_.write(entry() + ".cubin", std::string(kCubin).substr(0, 4));
  Status s = load();
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr(entry() + ".cubin"));
  EXPECT_THAT(s.message(), HasSubstr("differs from"));
  EXPECT_TRUE(gImage.empty());
}

TEST_F(BundleIndexTest, ChangedMetaFailsItsChecksum) {
  index();
  dir_.write(entry() + ".meta", config_.toMeta() + "# edited\n");
  Status s = load();
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr(entry() + ".meta"));
}

TEST_F(BundleIndexTest, ListedFileMissingIsAnIncompleteBundle) {
  KernelConfig other = config_;
  other.stages = config_.stages - 1;
  dir_.write(other.entryName() + ".meta", other.toMeta());
  dir_.write(other.entryName() + ".ptx", kPtx);
  index();
  ASSERT_EQ(::remove((dir_.path() + "/" + other.entryName() + ".ptx").c_str()),
            0);
  // Even a kernel whose own files are there: the bundle is incomplete.
  Status s = load();
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("incomplete"));
  EXPECT_THAT(s.message(), HasSubstr(other.entryName() + ".ptx"));
}

TEST_F(BundleIndexTest, CheckKernelBundleThroughTheCAbi) {
  dir_.write(entry() + ".cubin", kCubin);
  index();
  char resolved[512], err[512];
  int32_t kernels = -1, cubins = -1;
  // No directory given: the one calls would use.
  dgemm::test::ScopedEnv env("DGEMM_KERNEL_DIR", dir_.path());
  int rc = dgemm_check_kernel_bundle(nullptr, resolved, sizeof(resolved),
                                     &kernels, &cubins, err, sizeof(err));
  ASSERT_EQ(rc, DGEMM_OK) << err;
  EXPECT_EQ(std::string(resolved), dir_.path());
  EXPECT_EQ(kernels, 1);
  EXPECT_EQ(cubins, 1);

  dir_.write(entry() + ".ptx", std::string(kPtx) + "// more\n");
  rc = dgemm_check_kernel_bundle(dir_.path().c_str(), nullptr, 0, nullptr,
                                 nullptr, err, sizeof(err));
  EXPECT_EQ(rc, DGEMM_ERROR_BAD_KERNEL_BUNDLE);
  EXPECT_THAT(err, HasSubstr(entry() + ".ptx: checksum"));

  ASSERT_EQ(::remove((dir_.path() + "/index.txt").c_str()), 0);
  rc = dgemm_check_kernel_bundle(dir_.path().c_str(), nullptr, 0, nullptr,
                                 nullptr, err, sizeof(err));
  EXPECT_EQ(rc, DGEMM_ERROR_KERNEL_NOT_FOUND);
  EXPECT_THAT(err, HasSubstr("has no index.txt"));
}

TEST(BundleIndexParseTest, WrittenIndexParses) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  KernelConfig config = someConfig();
  dir.write(config.entryName() + ".meta", config.toMeta());
  dir.write(config.entryName() + ".ptx", kPtx);
  ASSERT_TRUE(writeBundleIndex(dir.path()).ok());
  BundleIndex index;
  Status s = loadBundleIndex(dir.path(), index);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(index.format, kBundleIndexFormat);
  EXPECT_EQ(index.ptxIsa, "8.6");
  EXPECT_EQ(index.gitCommit, "hand-made");
  ASSERT_EQ(index.kernels.size(), 1u);
  EXPECT_EQ(index.kernels[0].entry, config.entryName());
  EXPECT_EQ(index.kernels[0].ptx, fnv1a64(kPtx));
  EXPECT_EQ(index.kernels[0].meta, fnv1a64(config.toMeta()));
  EXPECT_FALSE(index.kernels[0].cubin.has_value());
}

Status parse(const std::string &text, BundleIndex &index) {
  return parseBundleIndex(text, "b/index.txt", index);
}

std::string
header(int heuristicsVersion = dgemm::heuristics::kHeuristicsVersion) {
  return "format=2\ngit_commit=abc\nheuristics_version=" +
         std::to_string(heuristicsVersion) +
         "\nkernel_abi=" + std::to_string(kKernelAbiVersion) +
         "\ntarget=sm_90a\nptx_isa=8.6\nchecksum=fnv1a64\n";
}

constexpr const char *kLine =
    "kernel=k meta=0123456789abcdef ptx=fedcba9876543210 cubin=none\n";

TEST(BundleIndexParseTest, GoodIndex) {
  BundleIndex index;
  Status s = parse(header() + kLine +
                       "kernel=k2 meta=0000000000000001 ptx=0000000000000002 "
                       "cubin=0000000000000003\n",
                   index);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(index.gitCommit, "abc");
  EXPECT_EQ(index.ptxasRelease, "unknown"); // optional key, absent
  ASSERT_EQ(index.kernels.size(), 2u);
  EXPECT_EQ(index.kernels[0].meta, 0x0123456789abcdefull);
  EXPECT_EQ(index.kernels[1].cubin, std::optional<uint64_t>(3));
}

TEST_F(BundleIndexTest, ListsAndLoadsBf16Kernels) {
  // A bundle holding BF16 kernels beside the FP8 one: the index lists them
  // and each loads through the index under its own configuration (its .meta
  // read with the BF16 keys and matched against it).
  dgemm::heuristics::Bf16Problem problem;
  problem.majorA = dgemm::heuristics::Major::MN;
  problem.dF32 = problem.accumulate = true;
  std::vector<KernelConfig> bf16 = dgemm::heuristics::candidateBf16Configs(
      problem, dgemm::heuristics::Target());
  problem = dgemm::heuristics::Bf16Problem();
  problem.kind = dgemm::heuristics::Kind::KGroupedContiguous;
  problem.majorA = problem.majorB = dgemm::heuristics::Major::MN;
  problem.dF32 = true;
  for (const KernelConfig &c : dgemm::heuristics::candidateBf16Configs(
           problem, dgemm::heuristics::Target()))
    bf16.push_back(c);
  ASSERT_FALSE(bf16.empty());
  for (const KernelConfig &c : bf16) {
    dir_.write(c.entryName() + ".meta", c.toMeta());
    dir_.write(c.entryName() + ".ptx", kPtx);
  }
  index();
  BundleIndex listed;
  ASSERT_TRUE(checkKernelBundle(dir_.path(), listed).ok());
  EXPECT_EQ(listed.kernels.size(), bf16.size() + 1);
  for (const KernelConfig &c : bf16) {
    EXPECT_NE(listed.find(c.entryName()), nullptr) << c.entryName();
    config_ = c;
    Status s = load();
    ASSERT_TRUE(s.ok()) << c.entryName() << ": " << s.message();
    EXPECT_EQ(loaded_->meta.entry, c.entryName());
    EXPECT_EQ(loaded_->meta.blockK, 64);
    EXPECT_EQ(loaded_->meta.majorA, c.majorA);
  }
  // The first candidate of one layout is not the kernel of another.
  config_ = bf16.front();
  config_.majorA = dgemm::heuristics::Major::K;
  Status s = load();
  EXPECT_EQ(s.code(), ErrorCode::KernelNotFound);
  EXPECT_THAT(s.message(), HasSubstr(config_.entryName()));
}

TEST(BundleIndexParseTest, OlderPlainListIsRefusedWithTheCommand) {
  BundleIndex index;
  Status s = parse("dgemm_kgrouped_fp8_1d1d_bm128_bn128_s6_r2\n", index);
  EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle);
  EXPECT_THAT(s.message(), HasSubstr("older compiler"));
  EXPECT_THAT(s.message(), HasSubstr("--bundle-dir=b "));
}

TEST(BundleIndexParseTest, BadIndexesNameTheRule) {
  struct Case {
    std::string text, expected;
  } cases[] = {
      {header(dgemm::heuristics::kHeuristicsVersion + 1) + kLine,
       "key 'heuristics_version' must be"},
      {"format=1\n" + header().substr(9) + kLine, "key 'format' must be 2"},
      {header(), "lists no kernel"},
      {header() + kLine + kLine, "kernel k is listed twice"},
      {header() + "kernel=k meta=0123 ptx=fedcba9876543210 cubin=none\n",
       "16 hexadecimal digits"},
      {header() + "kernel=k meta=0123456789abcdef cubin=none\n",
       "needs meta=, ptx= and cubin="},
      {header() + "kernel=9k meta=0123456789abcdef\n", "PTX identifier"},
      {header().substr(0, header().find("checksum")) + kLine,
       "key 'checksum' is missing"},
  };
  for (const Case &c : cases) {
    BundleIndex index;
    Status s = parse(c.text, index);
    EXPECT_EQ(s.code(), ErrorCode::BadKernelBundle) << c.text;
    EXPECT_THAT(s.message(), HasSubstr(c.expected)) << c.text;
    EXPECT_THAT(s.message(), HasSubstr("b/index.txt"));
  }
}

TEST(BundleIndexParseTest, PtxIsaToDriverVersion) {
  EXPECT_EQ(driverVersionForPtxIsa("8.0"), 12000);
  EXPECT_EQ(driverVersionForPtxIsa("8.5"), 12050);
  EXPECT_EQ(driverVersionForPtxIsa("8.6"), 12070);
  EXPECT_EQ(driverVersionForPtxIsa("8.7"), 12080);
  EXPECT_EQ(driverVersionForPtxIsa("9.0"), 13000);
  EXPECT_EQ(driverVersionForPtxIsa("7.8"), 0);
  EXPECT_EQ(ptxIsaOf(".version 8.6\n.target sm_90a\n"), "8.6");
  EXPECT_EQ(ptxIsaOf("// x\n\n.version 8.7\n"), "8.7");
  EXPECT_EQ(ptxIsaOf("no version"), "");
}

TEST(BundleIndexParseTest, Fnv1aMatchesTheReference) {
  // The published FNV-1a 64 test vectors.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

} // namespace
