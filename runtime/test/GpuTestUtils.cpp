//===- GpuTestUtils.cpp - Device fixture and host reference ---------------===//

#include "GpuTestUtils.h"

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/Validation.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

using namespace dgemm::test;
using dgemm::runtime::DriverApi;
using dgemm::runtime::Status;

namespace {

const DriverApi *gApi = nullptr;

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double uniform01(uint64_t &state) {
  return double(splitmix64(state) >> 11) * 0x1.0p-53;
}

/// Calls fn(i) for i in [0, count) on all hardware threads.
template <typename Fn> void parallelFor(int64_t count, Fn fn) {
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<int64_t> next{0};
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      for (int64_t i; (i = next.fetch_add(1)) < count;)
        fn(i);
    });
  for (std::thread &t : threads)
    t.join();
}

/// A byte that decodes to +-[0.25, 3.75]: exponent field 5..8.
uint8_t randomCode(uint64_t bits) {
  return uint8_t((bits & 0x80) | ((5 + ((bits >> 3) & 3)) << 3) | (bits & 7));
}

void fillCodes(std::vector<uint8_t> &out, uint64_t seed) {
  constexpr int64_t kChunk = 1 << 20;
  int64_t chunks = (int64_t(out.size()) + kChunk - 1) / kChunk;
  parallelFor(chunks, [&](int64_t chunk) {
    uint64_t state = seed ^ (uint64_t(chunk) * 0xd1b54a32d192ed03ull);
    int64_t end = std::min<int64_t>(int64_t(out.size()), (chunk + 1) * kChunk);
    for (int64_t i = chunk * kChunk; i < end; i += 8) {
      uint64_t bits = splitmix64(state);
      for (int64_t j = i; j < std::min(end, i + 8); ++j, bits >>= 8)
        out[j] = randomCode(bits);
    }
  });
}

float dot128(const float *x, const float *y) {
  // Independent partial sums so the compiler can vectorize.
  float partial[16] = {};
  for (int k = 0; k < 128; k += 16)
    for (int j = 0; j < 16; ++j)
      partial[j] += x[k + j] * y[k + j];
  float sum = 0;
  for (float p : partial)
    sum += p;
  return sum;
}

CUcontext retainedPrimaryContext(const DriverApi &api, CUdevice device) {
  // Retained once and never released: the runtime caches modules per context,
  // so the context must outlive every test.
  static CUcontext context = nullptr;
  if (!context)
    api.cuDevicePrimaryCtxRetain(&context, device);
  return context;
}

std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to, int *count) {
  *count = 0;
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos;
       at += to.size(), ++*count)
    text.replace(at, from.size(), to);
  return text;
}

} // namespace

const DriverApi &dgemm::test::driver() { return *gApi; }

::testing::AssertionResult dgemm::test::cuOk(CUresult result,
                                             const char *what) {
  if (result == CUDA_SUCCESS)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << " failed: "
         << (gApi ? runtime::describeCuResult(*gApi, result)
                  : std::to_string(result));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_)
    gApi->cuMemFree(ptr_);
}

bool DeviceBuffer::allocate(size_t bytes) {
  if (ptr_)
    gApi->cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = std::max<size_t>(bytes, 1);
  ::testing::AssertionResult ok =
      cuOk(gApi->cuMemAlloc(&ptr_, bytes_), "cuMemAlloc");
  EXPECT_TRUE(ok) << bytes_ << " bytes";
  return bool(ok);
}

bool DeviceBuffer::upload(const void *host, size_t bytes) {
  if (bytes == 0)
    return true;
  ::testing::AssertionResult ok =
      cuOk(gApi->cuMemcpyHtoD(ptr_, host, bytes), "cuMemcpyHtoD");
  EXPECT_TRUE(ok);
  return bool(ok);
}

bool DeviceBuffer::download(void *host, size_t bytes) const {
  ::testing::AssertionResult ok =
      cuOk(gApi->cuMemcpyDtoH(host, ptr_, bytes), "cuMemcpyDtoH");
  EXPECT_TRUE(ok);
  return bool(ok);
}

std::string dgemm::test::bundleName(Bundle bundle) {
  return bundle == Bundle::Real ? "RealBundle" : "ReferenceKernel";
}

void GpuTest::SetUp() {
  Status s = runtime::getDriver(gApi);
  if (!s.ok())
    GTEST_SKIP() << s.message(); // "no CUDA driver/device: ..."
  CUdevice device;
  DGEMM_CU_ASSERT(gApi->cuDeviceGet(&device, 0));
  int major = 0, minor = 0;
  DGEMM_CU_ASSERT(gApi->cuDeviceGetAttribute(
      &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
  DGEMM_CU_ASSERT(gApi->cuDeviceGetAttribute(
      &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
  if (major != 9 || minor != 0)
    GTEST_SKIP() << "no CUDA driver/device: device 0 has compute capability "
                 << major << "." << minor << ", the kernels need 9.0";
  DGEMM_CU_ASSERT(gApi->cuDeviceGetAttribute(
      &smCount_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
  context_ = retainedPrimaryContext(*gApi, device);
  ASSERT_NE(context_, nullptr) << "cuDevicePrimaryCtxRetain failed";
  DGEMM_CU_ASSERT(gApi->cuCtxSetCurrent(context_));
  DGEMM_CU_ASSERT(gApi->cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
}

void GpuTest::TearDown() {
  bundleEnv_.reset();
  if (stream_) {
    EXPECT_TRUE(
        cuOk(gApi->cuStreamSynchronize(stream_), "cuStreamSynchronize"));
    gApi->cuStreamDestroy(stream_);
  }
}

dgemm::heuristics::Target GpuTest::deviceTarget() {
  CUdevice device = 0;
  gApi->cuCtxGetDevice(&device);
  runtime::DeviceInfo info;
  if (Status s = runtime::queryDeviceInfo(*gApi, device, info); !s.ok())
    ADD_FAILURE() << "device query failed: " << s.message();
  return runtime::targetFor(info);
}

std::string GpuTest::prepareBundle(Bundle bundle, int64_t m, int64_t n,
                                   const std::vector<int32_t> &ks,
                                   bool inPlace) {
  // The configuration the runtime will launch (DGEMM_DESC_SLOTS included).
  heuristics::Target target = deviceTarget();
  heuristics::KernelConfig config;
  if (Status s = runtime::chooseKGroupedConfig(m, n, int(ks.size()), ks.data(),
                                               target, inPlace, config);
      !s.ok()) {
    ADD_FAILURE() << "no configuration: " << s.message();
    return "no configuration";
  }
  preparedConfig_ = config;

  if (bundle == Bundle::Real) {
    // Skip before generating operands when the kernel is not there (the
    // runtime would report the same).
    std::string dir;
    if (Status s = runtime::resolveKernelDir(dir); !s.ok())
      return "kernel bundle lacks the kernel: " + s.message();
    std::string meta = dir + "/" + config.entryName() + ".meta";
    if (!std::ifstream(meta))
      return "kernel bundle lacks the kernel: no " + meta;
    return "";
  }

  static const std::string ptx = testKernelsPtx();
  if (ptx.empty())
    return "the reference kernel was not built (no nvcc at build time)";
  static TempDir dir;
  if (!dir.ok()) {
    ADD_FAILURE() << "cannot create a temporary bundle directory";
    return "no temporary directory";
  }

  // The reference kernel keeps a block_m x block_n FP32 accumulator tile and
  // the two scale boxes in dynamic shared memory.
  auto align128 = [](int bytes) { return (bytes + 127) / 128 * 128; };
  int needed = align128(config.blockM * config.blockN * 4) +
               align128(config.blockM * 4) + align128(config.blockN * 4) + 8;
  if (config.smemBytes() < needed) {
    ADD_FAILURE() << config.entryName() << " gives " << config.smemBytes()
                  << " bytes of shared memory; the reference kernel needs "
                  << needed;
    return "config too small for the reference kernel";
  }

  std::string entry = config.entryName();
  int count = 0;
  std::string text = replaceAll(ptx, "dgemm_reference_kgrouped", entry, &count);
  const std::pair<const char *, int> constants[] = {
      {"dgemm_ref_block_m = 1111", config.blockM},
      {"dgemm_ref_block_n = 2222", config.blockN},
      {"dgemm_ref_desc_slots = 3333", config.descSlots}};
  for (const auto &[pattern, value] : constants) {
    std::string key(pattern);
    key = key.substr(0, key.find('=') + 2);
    int replaced = 0;
    text = replaceAll(text, pattern, key + std::to_string(value), &replaced);
    if (replaced != 1) {
      ADD_FAILURE() << "reference PTX: expected one '" << pattern << "'";
      return "unexpected reference PTX";
    }
  }
  dir.write(entry + ".ptx", text);
  dir.write(entry + ".meta", config.toMeta());
  if (Status s = runtime::writeBundleIndex(dir.path()); !s.ok()) {
    ADD_FAILURE() << s.message();
    return "cannot index the temporary bundle";
  }
  bundleEnv_ = std::make_unique<ScopedEnv>("DGEMM_KERNEL_DIR", dir.path());
  return "";
}

HostProblem dgemm::test::makeRandomProblem(int64_t m, int64_t n,
                                           std::vector<int32_t> ks,
                                           uint64_t seed, bool zeroC) {
  HostProblem p;
  p.m = m;
  p.n = n;
  p.ks = std::move(ks);
  for (int32_t k : p.ks)
    p.sumK += k;
  int64_t scaleBlocks = std::max<int64_t>(1, p.sumK / 128);
  p.a.resize(size_t(p.sumK * m));
  p.b.resize(size_t(p.sumK * n));
  fillCodes(p.a, seed * 3 + 1);
  fillCodes(p.b, seed * 3 + 2);
  uint64_t state = seed * 3 + 3;
  p.sfa.resize(size_t(scaleBlocks * m));
  p.sfb.resize(size_t(scaleBlocks * n));
  for (float &s : p.sfa)
    s = float((1 + 2 * uniform01(state)) / 16);
  for (float &s : p.sfb)
    s = float((1 + 2 * uniform01(state)) / 16);
  if (!zeroC) {
    p.c.resize(size_t(p.outputElems()));
    for (float &x : p.c)
      x = float(2 * uniform01(state) - 1);
    // An empty group's d must be bitwise its c; -0.0 tells a copy from
    // c + 0 (which is +0.0), so every third element of such a group is -0.0.
    for (int64_t g = 0; g < p.groups(); ++g)
      if (p.ks[g] == 0)
        for (int64_t i = 0; i < m * n; i += 3)
          p.c[size_t(g * m * n + i)] = -0.0f;
  }
  return p;
}

std::vector<int64_t> dgemm::test::referenceRows(const HostProblem &p,
                                                uint64_t seed) {
  std::vector<int64_t> rows;
  if (double(p.m) * double(p.n) * double(std::max<int64_t>(p.sumK, 1)) <=
      double(int64_t(1) << 33)) {
    for (int64_t r = 0; r < p.m; ++r)
      rows.push_back(r);
    return rows;
  }
  std::set<int64_t> picked = {0, p.m - 1};
  for (int64_t edge : {63, 64, 127, 128, 191, 192, 255, 256})
    if (edge < p.m)
      picked.insert(edge);
  uint64_t state = seed;
  while (int64_t(picked.size()) < std::min<int64_t>(256, p.m))
    picked.insert(int64_t(splitmix64(state) % uint64_t(p.m)));
  return std::vector<int64_t>(picked.begin(), picked.end());
}

std::vector<double>
dgemm::test::referenceOutput(const HostProblem &p,
                             const std::vector<int64_t> &rows) {
  const std::array<float, 256> &lut = e4m3Table();
  const int64_t numRows = int64_t(rows.size());
  std::vector<double> out(size_t(p.groups() * numRows * p.n));
  int64_t prefix = 0;
  for (int64_t g = 0; g < p.groups(); ++g) {
    const int64_t kg = p.ks[g];
    double *outGroup = out.data() + g * numRows * p.n;
    const float *cGroup = p.c.empty() ? nullptr : p.c.data() + g * p.m * p.n;
    // B_g decoded once: n rows of kg floats.
    std::vector<float> bf(size_t(p.n * kg));
    const uint8_t *bGroup = p.b.data() + p.n * prefix;
    parallelFor(p.n, [&](int64_t col) {
      for (int64_t k = 0; k < kg; ++k)
        bf[col * kg + k] = lut[bGroup[col * kg + k]];
    });
    const uint8_t *aGroup = p.a.data() + p.m * prefix;
    const int64_t firstBlock = prefix / 128;
    parallelFor(numRows, [&](int64_t ri) {
      const int64_t row = rows[ri];
      std::vector<float> af(static_cast<size_t>(kg));
      for (int64_t k = 0; k < kg; ++k)
        af[k] = lut[aGroup[row * kg + k]];
      for (int64_t col = 0; col < p.n; ++col) {
        double acc = cGroup ? cGroup[row * p.n + col] : 0.0;
        for (int64_t kb = 0; kb < kg / 128; ++kb) {
          float dot =
              dot128(af.data() + kb * 128, bf.data() + col * kg + kb * 128);
          acc += double(dot) * p.sfa[(firstBlock + kb) * p.m + row] *
                 p.sfb[(firstBlock + kb) * p.n + col];
        }
        outGroup[ri * p.n + col] = acc;
      }
    });
    prefix += kg;
  }
  return out;
}

Comparison dgemm::test::compareOutput(const HostProblem &p,
                                      const std::vector<float> &d,
                                      const std::vector<int64_t> &rows,
                                      const std::vector<double> &ref) {
  Comparison result;
  const int64_t numRows = int64_t(rows.size());
  for (int64_t g = 0; g < p.groups(); ++g) {
    double xy = 0, xxyy = 0;
    for (int64_t ri = 0; ri < numRows; ++ri) {
      for (int64_t col = 0; col < p.n; ++col) {
        size_t at = size_t((g * p.m + rows[ri]) * p.n + col);
        float x = d[at];
        double y = ref[size_t((g * numRows + ri) * p.n + col)];
        if (!std::isfinite(x)) {
          ++result.nonFinite;
          continue;
        }
        xy += x * y;
        xxyy += double(x) * x + y * y;
        if (p.ks[g] == 0) {
          float c = p.c.empty() ? 0.f : p.c[at];
          if (std::memcmp(&x, &c, 4) != 0)
            ++result.emptyGroupMismatches;
        }
      }
    }
    result.groupDiff.push_back(xxyy == 0 ? 0.0 : 1 - 2 * xy / xxyy);
  }
  return result;
}

::testing::AssertionResult dgemm::test::uploadProblem(const HostProblem &p,
                                                      bool inPlace,
                                                      DeviceProblem &dev) {
  dev.inPlace = inPlace;
  std::vector<float> c = p.c;
  if (c.empty())
    c.assign(size_t(p.outputElems()), 0.f);
  bool ok = dev.a.upload(p.a) && dev.b.upload(p.b) && dev.sfa.upload(p.sfa) &&
            dev.sfb.upload(p.sfb) && dev.ks.upload(p.ks);
  if (inPlace)
    ok = ok && dev.d.upload(c);
  else
    ok = ok && dev.c.upload(c) && dev.d.allocate(c.size() * 4);
  if (!ok)
    return ::testing::AssertionFailure() << "uploading the operands failed";
  return ::testing::AssertionSuccess();
}

dgemm::runtime::KGroupedArgs dgemm::test::makeArgs(const HostProblem &p,
                                                   const DeviceProblem &dev,
                                                   CUdeviceptr workspace,
                                                   uint64_t workspaceBytes) {
  runtime::KGroupedArgs args;
  args.a = dev.a.as<void>();
  args.sfa = dev.sfa.as<void>();
  args.b = dev.b.as<void>();
  args.sfb = dev.sfb.as<void>();
  args.d = dev.d.as<void>();
  args.c = dev.cPtr();
  args.m = p.m;
  args.n = p.n;
  args.numGroups = p.groups();
  args.ksHost = p.ks.data();
  args.ksDevice = dev.ks.as<int32_t>();
  args.workspace = reinterpret_cast<void *>(workspace);
  args.workspaceBytes = workspaceBytes;
  return args;
}

std::string dgemm::test::testKernelsPtx() {
#ifdef DGEMM_TEST_KERNELS_PTX
  std::ifstream in(DGEMM_TEST_KERNELS_PTX);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
#else
  return "";
#endif
}

uint64_t dgemm::test::testSeed() {
  const ::testing::TestInfo *info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = std::string(info->test_suite_name()) + "." + info->name();
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a
  for (unsigned char ch : name)
    hash = (hash ^ ch) * 0x100000001b3ull;
  return hash;
}
