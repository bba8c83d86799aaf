//===- CacheConcurrencyTest.cpp - The runtime's caches under many threads -===//
//
// The module cache, the device-info cache and the internal workspaces, used
// from several host threads at once through a fake driver table, so no GPU
// is needed: every kernel is loaded once per context, a slow load does not
// hold up other kernels, and no two streams (per-thread default streams
// included) share a workspace or wait for each other.
//
//===----------------------------------------------------------------------===//

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/ModuleCache.h"

#include "TestUtils.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace dgemm::runtime;
using dgemm::heuristics::KernelConfig;
using dgemm::test::TempDir;

namespace {

constexpr int kThreads = 8;

// What the fake driver did, for the tests to check.
std::atomic<int> gModuleLoads{0};
std::atomic<int> gAttributeQueries{0};
std::atomic<uintptr_t> gNextAllocation{0x7f0000000000};

// A PTX text of "block" makes the fake JIT wait until released.
std::mutex gGateMutex;
std::condition_variable gGateChanged;
bool gGateOpen = true;
bool gGateEntered = false;

CUresult fakeModuleLoadDataEx(CUmodule *module, const void *image, unsigned int,
                              CUjit_option *, void **) {
  if (std::string(static_cast<const char *>(image)) == "block") {
    std::unique_lock<std::mutex> lock(gGateMutex);
    gGateEntered = true;
    gGateChanged.notify_all();
    gGateChanged.wait(lock, [] { return gGateOpen; });
  }
  // Long enough for concurrent first uses to overlap.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  *module = reinterpret_cast<CUmodule>(uintptr_t(++gModuleLoads));
  return CUDA_SUCCESS;
}

CUresult fakeModuleGetFunction(CUfunction *function, CUmodule module,
                               const char *) {
  *function = reinterpret_cast<CUfunction>(module);
  return CUDA_SUCCESS;
}

CUresult fakeFuncGetAttribute(int *value, CUfunction_attribute attribute,
                              CUfunction) {
  *value = attribute == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return CUDA_SUCCESS;
}

CUresult fakeDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                CUdevice device) {
  ++gAttributeQueries;
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  *value = int(attribute) * 10 + int(device);
  return CUDA_SUCCESS;
}

DriverApi fakeDriver() {
  DriverApi api;
  api.cuModuleLoadDataEx = fakeModuleLoadDataEx;
  api.cuModuleGetFunction = fakeModuleGetFunction;
  api.cuModuleUnload = [](CUmodule) { return CUDA_SUCCESS; };
  api.cuFuncSetAttribute = [](CUfunction, CUfunction_attribute, int) {
    return CUDA_SUCCESS;
  };
  api.cuFuncGetAttribute = fakeFuncGetAttribute;
  api.cuDeviceGetAttribute = fakeDeviceGetAttribute;
  api.cuStreamIsCapturing = [](CUstream, CUstreamCaptureStatus *status) {
    *status = CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  };
  api.cuMemAllocAsync = [](CUdeviceptr *ptr, size_t bytes, CUstream) {
    // Never reused, so equal pointers mean a shared buffer.
    *ptr = CUdeviceptr(gNextAllocation.fetch_add((bytes + 4095) / 4096 * 4096));
    return CUDA_SUCCESS;
  };
  api.cuMemFreeAsync = [](CUdeviceptr, CUstream) { return CUDA_SUCCESS; };
  return api;
}

CUcontext fakeContext(uintptr_t i) {
  return reinterpret_cast<CUcontext>(0xc0c0000 + i);
}

/// The first of `n` fake context numbers no earlier test (or repetition)
/// used: the caches live as long as the process.
uintptr_t freshContexts(uintptr_t n) {
  static std::atomic<uintptr_t> next{0};
  return next.fetch_add(n);
}

CUstream fakeStream(uintptr_t i) {
  return reinterpret_cast<CUstream>(0x5e0000 + 16 * i);
}

/// Three kernels of a bundle: their .meta from the configuration, and a PTX
/// text the fake JIT accepts.
std::vector<KernelConfig> writeBundle(const TempDir &dir) {
  std::vector<KernelConfig> configs;
  for (int stages : {3, 4, 5}) {
    KernelConfig config;
    config.stages = stages;
    dir.write(config.entryName() + ".meta", config.toMeta());
    dir.write(config.entryName() + ".ptx", "ptx");
    configs.push_back(config);
  }
  EXPECT_TRUE(writeBundleIndex(dir.path()).ok());
  return configs;
}

DeviceInfo fakeDevice() {
  DeviceInfo device;
  device.maxSmemOptin = dgemm::heuristics::kSm90MaxSmemPerBlock;
  device.smCount = 132;
  device.ccMajor = 9;
  return device;
}

TEST(CacheConcurrencyTest, EachKernelLoadsOncePerContext) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::vector<KernelConfig> configs = writeBundle(dir);
  DriverApi api = fakeDriver();
  DeviceInfo device = fakeDevice();
  constexpr int kContexts = 3;
  uintptr_t base = freshContexts(kContexts);
  int loadsBefore = gModuleLoads;

  // Per thread: what each (context, kernel) resolved to.
  std::vector<std::map<std::pair<int, int>, const LoadedKernel *>> seen(
      kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 60; ++i) {
        // Every (context, kernel) pair, in a different order per thread.
        int c = i % kContexts, k = (i / kContexts + t) % int(configs.size());
        const LoadedKernel *kernel = nullptr;
        Status s = getKernel(api, fakeContext(base + c), device, dir.path(),
                             configs[k], kernel);
        if (!s.ok()) {
          errors[t] = s.message();
          return;
        }
        auto [it, fresh] = seen[t].emplace(std::make_pair(c, k), kernel);
        if (!fresh && it->second != kernel)
          errors[t] = "one key gave two kernels";
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &error : errors)
    ASSERT_EQ(error, "");

  EXPECT_EQ(gModuleLoads - loadsBefore, kContexts * int(configs.size()))
      << "a kernel was JIT-compiled more than once in one context";
  std::map<std::pair<int, int>, const LoadedKernel *> all;
  std::set<const LoadedKernel *> distinct;
  for (const auto &one : seen)
    for (const auto &[key, kernel] : one) {
      auto [it, fresh] = all.emplace(key, kernel);
      EXPECT_EQ(it->second, kernel) << "threads disagree on a kernel";
      distinct.insert(kernel);
    }
  EXPECT_EQ(distinct.size(), all.size());
  for (const auto &[key, kernel] : all)
    EXPECT_EQ(kernel->meta.entry, configs[key.second].entryName());
}

TEST(CacheConcurrencyTest, SlowLoadDoesNotHoldUpOtherKernels) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::vector<KernelConfig> configs = writeBundle(dir);
  // The first kernel's JIT compile waits for the gate.
  dir.write(configs[0].entryName() + ".ptx", "block");
  ASSERT_TRUE(writeBundleIndex(dir.path()).ok());
  DriverApi api = fakeDriver();
  DeviceInfo device = fakeDevice();
  CUcontext context = fakeContext(freshContexts(1));
  {
    std::lock_guard<std::mutex> lock(gGateMutex);
    gGateOpen = false;
    gGateEntered = false;
  }
  auto slow = std::async(std::launch::async, [&] {
    const LoadedKernel *kernel = nullptr;
    return getKernel(api, context, device, dir.path(), configs[0], kernel);
  });
  {
    std::unique_lock<std::mutex> lock(gGateMutex);
    ASSERT_TRUE(gGateChanged.wait_for(lock, std::chrono::seconds(10),
                                      [] { return gGateEntered; }));
  }
  auto other = std::async(std::launch::async, [&] {
    const LoadedKernel *kernel = nullptr;
    return getKernel(api, context, device, dir.path(), configs[1], kernel);
  });
  bool finished =
      other.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  {
    std::lock_guard<std::mutex> lock(gGateMutex);
    gGateOpen = true;
  }
  gGateChanged.notify_all();
  EXPECT_TRUE(finished) << "another kernel's load waited for a slow JIT";
  Status s = other.get();
  EXPECT_TRUE(s.ok()) << s.message();
  s = slow.get();
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(CacheConcurrencyTest, DeviceInfoIsQueriedOncePerContext) {
  DriverApi api = fakeDriver();
  constexpr int kContexts = 4;
  uintptr_t base = freshContexts(kContexts);
  int queriesBefore = gAttributeQueries;
  std::vector<std::vector<DeviceInfo>> seen(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        DeviceInfo info;
        int c = (t + i) % kContexts;
        if (getDeviceInfo(api, fakeContext(base + c), CUdevice(c), info).ok())
          seen[t].push_back(info);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const auto &infos : seen) {
    ASSERT_EQ(infos.size(), 40u);
    for (const DeviceInfo &info : infos)
      EXPECT_EQ(info.smCount,
                int(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) * 10 +
                    int(info.device));
  }
  // One query (seven attributes, queryDeviceInfo) per context.
  EXPECT_EQ(gAttributeQueries - queriesBefore, kContexts * 7);
}

/// Runs `calls` acquisitions per thread, thread t on stream(t); while a
/// thread holds a buffer's lock no other thread may hold the same buffer.
/// Returns the buffers each thread got.
std::vector<std::set<CUdeviceptr>> hammerWorkspaces(const DriverApi &api,
                                                    CUcontext context,
                                                    CUstream (*stream)(int),
                                                    std::string &error) {
  std::mutex inUseMutex;
  std::set<CUdeviceptr> inUse;
  std::vector<std::set<CUdeviceptr>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        CUdeviceptr buffer = 0;
        std::unique_lock<std::mutex> lock;
        // Growing sizes: some calls reallocate.
        uint64_t bytes = 256 * uint64_t(1 + (i * 7 + t) % 40);
        Status s = acquireInternalWorkspace(api, context, stream(t), bytes,
                                            buffer, lock);
        if (!s.ok()) {
          errors[t] = s.message();
          return;
        }
        got[t].insert(buffer);
        {
          std::lock_guard<std::mutex> guard(inUseMutex);
          if (!inUse.insert(buffer).second)
            errors[t] = "two threads held one buffer at once";
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        std::lock_guard<std::mutex> guard(inUseMutex);
        inUse.erase(buffer);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &e : errors)
    if (!e.empty())
      error = e;
  return got;
}

/// Whether two threads ever got the same buffer.
bool anyShared(const std::vector<std::set<CUdeviceptr>> &got) {
  std::set<CUdeviceptr> all;
  size_t total = 0;
  for (const auto &one : got) {
    total += one.size();
    all.insert(one.begin(), one.end());
  }
  return all.size() != total;
}

TEST(CacheConcurrencyTest, StreamsNeverShareAWorkspace) {
  DriverApi api = fakeDriver();
  std::string error;
  auto got = hammerWorkspaces(
      api, fakeContext(freshContexts(1)),
      [](int t) { return fakeStream(1000 + t); }, error);
  EXPECT_EQ(error, "");
  EXPECT_FALSE(anyShared(got));
}

TEST(CacheConcurrencyTest, PerThreadDefaultStreamsNeverShareAWorkspace) {
  // CU_STREAM_PER_THREAD is a different stream in every thread: kernels on
  // two of them may run at once, so one buffer for both would be a race.
  DriverApi api = fakeDriver();
  std::string error;
  auto got = hammerWorkspaces(
      api, fakeContext(freshContexts(1)),
      [](int) { return CU_STREAM_PER_THREAD; }, error);
  EXPECT_EQ(error, "");
  EXPECT_FALSE(anyShared(got))
      << "per-thread default streams of two threads shared a workspace";
}

TEST(CacheConcurrencyTest, OneStreamSerializesItsCallers) {
  // Several threads on one stream share its buffer, one at a time (the lock
  // is held until the launch is enqueued).
  DriverApi api = fakeDriver();
  std::string error;
  hammerWorkspaces(
      api, fakeContext(freshContexts(1)), [](int) { return fakeStream(2000); },
      error);
  EXPECT_EQ(error, "");
}

TEST(CacheConcurrencyTest, StreamsDoNotWaitForEachOther) {
  // A thread holding its stream's buffer (its launch being enqueued) must
  // not hold up a call on another stream.
  DriverApi api = fakeDriver();
  CUcontext context = fakeContext(freshContexts(1));
  CUdeviceptr first = 0;
  std::unique_lock<std::mutex> held;
  ASSERT_TRUE(acquireInternalWorkspace(api, context, fakeStream(3000), 1024,
                                       first, held)
                  .ok());
  auto other = std::async(std::launch::async, [&] {
    CUdeviceptr buffer = 0;
    std::unique_lock<std::mutex> lock;
    return acquireInternalWorkspace(api, context, fakeStream(3001), 1024,
                                    buffer, lock);
  });
  bool finished =
      other.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  held.unlock();
  EXPECT_TRUE(finished) << "a call on another stream waited";
  EXPECT_TRUE(other.get().ok());
}

} // namespace
