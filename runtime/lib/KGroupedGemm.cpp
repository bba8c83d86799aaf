//===- KGroupedGemm.cpp - The k-grouped FP8 GEMM, launch path -------------===//

#include "dgemm/Runtime/KGroupedGemm.h"

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/Driver.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/ModuleCache.h"
#include "dgemm/Runtime/TensorMaps.h"

#include "DriverExtras.h"
#include "Launch.h"

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>

using namespace dgemm::runtime;
using dgemm::heuristics::KernelConfig;
using dgemm::heuristics::Target;

#ifndef DGEMM_RUNTIME_VERSION
#define DGEMM_RUNTIME_VERSION "0.0.0"
#endif

Target dgemm::runtime::targetFor(const DeviceInfo &device) {
  Target target;
  target.numSMs = device.smCount;
  target.maxSmemPerBlock = device.maxSmemOptin;
  target.memoryBandwidthGBps = peakMemoryBandwidthGBps(device);
  return target;
}

namespace {

constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();

Status invalid(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

std::string hex(uintptr_t address) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%" PRIxPTR, address);
  return buffer;
}

/// a * b * c in 64 bits, or false.
bool mulFits(int64_t a, int64_t b, int64_t c, int64_t &out) {
  return !__builtin_mul_overflow(a, b, &out) &&
         !__builtin_mul_overflow(out, c, &out);
}

/// The driver, the context of `stream` made current (docs/Runtime.md), its
/// device's facts, and the configuration a call with these sizes launches.
Status enterAndChoose(CUstream stream, int64_t m, int64_t n, int numGroups,
                      const int *ksHost, bool inPlace, const DriverApi *&api,
                      ScopedContext &scope, DeviceInfo &device,
                      KernelConfig &config) {
  if (Status s = enterDevice(stream, api, scope, device); !s.ok())
    return s;
  Target target = targetFor(device);
  // A malformed DGEMM_* override fails here, naming the variable.
  if (Status s = chooseKGroupedConfig(m, n, numGroups, ksHost, target, inPlace,
                                      config);
      !s.ok())
    return s;
  if (std::string why = dgemm::heuristics::checkConfig(config, target);
      !why.empty())
    return Status::error(ErrorCode::UnsupportedDevice,
                         "no kernel configuration fits this device: " + why);
  return Status::success();
}

} // namespace

Status dgemm::runtime::kGroupedFp8GemmNtContiguous(const KGroupedArgs &args,
                                                   CUstream stream) {
  KGroupedShape shape;
  if (Status s = checkKGroupedArgs(args, &shape); !s.ok())
    return s;
  // Before the driver too; the workspace's pairs once its size is known.
  if (Status s = checkKGroupedBuffers(args, 0); !s.ok())
    return s;

  const DriverApi *api = nullptr;
  ScopedContext scope;
  DeviceInfo device;
  KernelConfig config;
  // In place (c is d) the reduction epilogue for short tiles or the in-place
  // kernel, each a kernel of its own (docs/Heuristics.md).
  if (Status s = enterAndChoose(stream, args.m, args.n, int(args.numGroups),
                                args.ksHost, /*inPlace=*/args.c == args.d, api,
                                scope, device, config);
      !s.ok())
    return s;
  // Never chosen for a separate c; checked because a kernel that only
  // accumulates in place would leave d without c.
  if (dgemm::heuristics::isInPlaceKernel(config.epilogue) && args.c != args.d)
    return Status::error(ErrorCode::InvalidArgument,
                         "argument 'c' must be 'd' for the in-place kernel " +
                             config.entryName());
  if (numOutputTiles(args.m, args.n, args.numGroups, config) >
      std::numeric_limits<uint32_t>::max())
    return Status::error(ErrorCode::InvalidArgument,
                         "arguments 'num_groups' * ceil(m / block_m) * "
                         "ceil(n / block_n) (the output tiles) must be < 2^32");
  int64_t gridX =
      gridSizeFor(args.m, args.n, args.numGroups, config, device.smCount);
  uint64_t workspaceBytes = workspaceBytesFor(gridX, config.descSlots);
  if (Status s = checkWorkspaceSize(args, workspaceBytes); !s.ok())
    return s;
  if (Status s = checkKGroupedBuffers(args, workspaceBytes); !s.ok())
    return s;
  const DriverExtras &extras = driverExtras(*api);
  if (Status s = checkBufferContexts(
          extras.cuPointerGetAttribute, extras.cuDeviceCanAccessPeer,
          scope.context(), scope.device(), args, workspaceBytes);
      !s.ok())
    return s;

  const LoadedKernel *kernel = nullptr;
  if (Status s = chosenKernel(*api, scope, device, config, kernel); !s.ok())
    return s;

  // Never chosen otherwise; checked because the 5-D map of B cannot
  // express a partial 16-row group.
  if (kernel->meta.quadB && args.n % 16 != 0)
    return Status::error(ErrorCode::InvalidArgument,
                         "argument 'n' must be a multiple of 16 for kernel " +
                             kernel->meta.entry + " (quad-ordered B), got " +
                             std::to_string(args.n));
  TensorMapSpec specs[kNumTensorMaps];
  describeKGroupedTensorMaps(args, shape, kernel->meta, specs);
  CUtensorMap maps[kNumTensorMaps];
  for (int i = 0; i < kNumTensorMaps; ++i)
    if (Status s = encodeTensorMap(*api, specs[i], maps[i]); !s.ok())
      return s;

  std::unique_lock<std::mutex> workspaceLock;
  CUdeviceptr workspace = reinterpret_cast<CUdeviceptr>(args.workspace);
  if (!workspace) {
    if (Status s =
            acquireInternalWorkspace(*api, scope.context(), stream,
                                     workspaceBytes, workspace, workspaceLock);
        !s.ok())
      return s;
    if (workspace % kWorkspaceAlignment != 0)
      return Status::error(ErrorCode::CudaError,
                           "internal workspace is not 128-byte aligned");
  }

  // Parameter order and types: docs/KernelABI.md.
  CUdeviceptr a = reinterpret_cast<CUdeviceptr>(args.a);
  CUdeviceptr b = reinterpret_cast<CUdeviceptr>(args.b);
  CUdeviceptr d = reinterpret_cast<CUdeviceptr>(args.d);
  CUdeviceptr c = reinterpret_cast<CUdeviceptr>(args.c);
  CUdeviceptr ks = reinterpret_cast<CUdeviceptr>(args.ksDevice);
  uint32_t m = uint32_t(args.m), n = uint32_t(args.n),
           groups = uint32_t(args.numGroups);
  uint32_t band =
      chooseRasterBand(args.m, args.n, int(args.numGroups), args.ksHost);
  // The m-grouped kernel's parameters, which this kernel ignores.
  CUdeviceptr sfb = reinterpret_cast<CUdeviceptr>(args.sfb);
  uint32_t noK = 0;
  void *params[] = {&maps[kMapA],
                    &maps[kMapB],
                    &maps[kMapSfa],
                    &maps[kMapSfb],
                    &maps[kMapD],
                    &a,
                    &b,
                    &d,
                    &c,
                    &ks,
                    &workspace,
                    &m,
                    &n,
                    &groups,
                    &band,
                    &sfb,
                    &noK};

  return launchPersistent(*api, *kernel, gridX, stream, params);
}

Status dgemm::runtime::kGroupedFp8GemmNtContiguous(
    const void *a, const float *sfa, const void *b, const float *sfb, float *d,
    const float *c, int64_t m, int64_t n, int numGroups, const int *ksHost,
    const int *ksDevice, void *workspace, size_t workspaceBytes,
    CUstream stream) {
  KGroupedArgs args{
      a,      sfa,      b,         sfb,           d, c, m, n, numGroups,
      ksHost, ksDevice, workspace, workspaceBytes};
  return kGroupedFp8GemmNtContiguous(args, stream);
}

size_t dgemm::runtime::kGroupedWorkspaceBytes(int64_t m, int64_t n,
                                              int numGroups,
                                              const int *ksHost) {
  // Checked here, before the heuristics see sizes no call could launch.
  if (!checkKGroupedSizes(m, n, numGroups, ksHost).ok())
    return 0;
  Target target;
  const DriverApi *api = nullptr;
  if (getDriver(api).ok()) {
    CUcontext current = nullptr;
    CUdevice device = 0;
    DeviceInfo info;
    // The torch op asks for the size on every call: with a current context
    // the device's attributes come from the per-context cache, since some
    // (the memory clock) take the driver hundreds of microseconds to answer.
    if (api->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current) {
      if (api->cuCtxGetDevice(&device) == CUDA_SUCCESS &&
          getDeviceInfo(*api, current, device, info).ok())
        target = targetFor(info);
    } else if (api->cuDeviceGet(&device, 0) == CUDA_SUCCESS &&
               queryDeviceInfo(*api, device, info).ok()) {
      target = targetFor(info);
    }
  }
  return kGroupedWorkspaceBytesFor(m, n, numGroups, ksHost, target);
}

Status dgemm::runtime::kGroupedKernelInfo(int64_t m, int64_t n, int numGroups,
                                          const int *ksHost, bool inPlace,
                                          KGroupedKernelInfo &info) {
  if (Status s = checkKGroupedSizes(m, n, numGroups, ksHost); !s.ok())
    return s;

  const DriverApi *api = nullptr;
  ScopedContext scope;
  DeviceInfo device;
  KernelConfig config;
  if (Status s = enterAndChoose(nullptr, m, n, numGroups, ksHost, inPlace, api,
                                scope, device, config);
      !s.ok())
    return s;
  const LoadedKernel *kernel = nullptr;
  if (Status s = chosenKernel(*api, scope, device, config, kernel); !s.ok())
    return s;
  info.entry = kernel->meta.entry;
  info.threads = kernel->meta.threads;
  info.gridX = int(gridSizeFor(m, n, numGroups, config, device.smCount));
  info.numRegs = kernel->numRegs;
  info.localBytes = kernel->localBytes;
  info.staticSmemBytes = kernel->staticSmemBytes;
  info.spillStoreBytes = kernel->spillStoreBytes;
  info.spillLoadBytes = kernel->spillLoadBytes;
  info.dynamicSmemBytes = int(kernel->meta.smemBytes);
  Target target = targetFor(device);
  info.memoryBandwidthGBps = target.memoryBandwidthGBps;
  info.calibration = dgemm::heuristics::calibrationName(
      dgemm::heuristics::calibrationFor(target));
  return Status::success();
}

Status dgemm::runtime::checkKGroupedArguments(const KGroupedArgs &args) {
  if (Status s = checkKGroupedArgs(args); !s.ok())
    return s;
  if (Status s = checkKGroupedBuffers(args, 0); !s.ok())
    return s;
  uint64_t workspaceBytes = kGroupedWorkspaceBytesFor(
      args.m, args.n, int(args.numGroups), args.ksHost, Target());
  if (Status s = checkWorkspaceSize(args, workspaceBytes); !s.ok())
    return s;
  return checkKGroupedBuffers(args, workspaceBytes);
}

Status dgemm::runtime::checkKGroupedSizes(int64_t m, int64_t n,
                                          int64_t numGroups,
                                          const int32_t *ksHost) {
  for (auto [value, name] : {std::pair(m, "m"), std::pair(n, "n")}) {
    if (value < 1 || value > kMaxInt32)
      return invalid(std::string("argument '") + name +
                     "' must be in [1, 2147483647] (the kernel takes it as "
                     "a 32-bit parameter), got " +
                     std::to_string(value));
  }
  if (numGroups < 1 || numGroups > kMaxInt32)
    return invalid("argument 'num_groups' must be in [1, 2147483647], got " +
                   std::to_string(numGroups));
  if (!ksHost)
    return invalid("argument 'ks' must not be null");
  int64_t sumK = 0; // <= 2^31 * 2^31 before the check below stops it.
  for (int64_t g = 0; g < numGroups; ++g) {
    if (ksHost[g] < 0 || ksHost[g] % 128 != 0)
      return invalid("argument 'ks' must hold multiples of 128 >= 0, got " +
                     std::to_string(ksHost[g]) + " for group " +
                     std::to_string(g));
    sumK += ksHost[g];
    if (sumK > kMaxInt32)
      return invalid("argument 'ks': sum(ks) must be <= 2147483647 (the "
                     "total K, like each K_g, is a 32-bit int), exceeded at "
                     "group " +
                     std::to_string(g));
  }
  int64_t outBytes = 0;
  if (!mulFits(numGroups * m, n, 4, outBytes))
    return invalid("arguments 'num_groups' * 'm' * 'n' * 4 (the bytes of "
                   "'d') must fit in 64 bits, got num_groups = " +
                   std::to_string(numGroups) + ", m = " + std::to_string(m) +
                   ", n = " + std::to_string(n));
  return Status::success();
}

Status dgemm::runtime::deviceSpans(const KGroupedArgs &args,
                                   uint64_t workspaceBytes,
                                   std::vector<DeviceSpan> &spans) {
  spans.clear();
  int64_t sumK = 0;
  for (int64_t g = 0; g < args.numGroups; ++g)
    sumK += args.ksHost[g]; // checkKGroupedArgs bounded it (2^39).
  int64_t scaleBlocks = sumK / 128;
  // Bytes the kernel touches in each buffer (docs/KernelABI.md).
  struct Extent {
    const char *name;
    const void *p;
    int64_t a, b, c;
    bool written;
  } extents[] = {
      {"a", args.a, args.m, sumK, 1, false},
      {"sfa", args.sfa, args.m, scaleBlocks, 4, false},
      {"b", args.b, args.n, sumK, 1, false},
      {"sfb", args.sfb, args.n, scaleBlocks, 4, false},
      {"c", args.c, args.numGroups * args.m, args.n, 4, false},
      {"d", args.d, args.numGroups * args.m, args.n, 4, true},
      {"ks_device", args.ksDevice, args.numGroups, 4, 1, false},
  };
  auto add = [&](const char *name, const void *p, uint64_t bytes,
                 bool written) {
    uintptr_t address = reinterpret_cast<uintptr_t>(p);
    uint64_t end = 0;
    if (__builtin_add_overflow(uint64_t(address), bytes, &end))
      return invalid(std::string("argument '") + name + "' at " + hex(address) +
                     " with " + std::to_string(bytes) +
                     " bytes ends past the 64-bit address space");
    spans.push_back({name, address, bytes, written});
    return Status::success();
  };
  for (const Extent &e : extents) {
    int64_t bytes = 0;
    if (!mulFits(e.a, e.b, e.c, bytes))
      return invalid(std::string("argument '") + e.name +
                     "': its size in bytes must fit in 64 bits");
    if (Status s = add(e.name, e.p, uint64_t(bytes), e.written); !s.ok())
      return s;
  }
  if (args.workspace && workspaceBytes > 0)
    return add("workspace", args.workspace, workspaceBytes, true);
  return Status::success();
}

Status dgemm::runtime::checkKGroupedBuffers(const KGroupedArgs &args,
                                            uint64_t workspaceBytes) {
  int64_t sumK = 0;
  for (int64_t g = 0; g < args.numGroups; ++g)
    sumK += args.ksHost[g];
  if (sumK > kMaxInt32)
    return invalid("argument 'ks_host': sum(K) must be <= 2147483647 (the "
                   "total K, like each K_g, is a 32-bit int), got " +
                   std::to_string(sumK));

  std::vector<DeviceSpan> spans;
  if (Status s = deviceSpans(args, workspaceBytes, spans); !s.ok())
    return s;
  for (size_t i = 0; i < spans.size(); ++i) {
    for (size_t j = i + 1; j < spans.size(); ++j) {
      const DeviceSpan &x = spans[i], &y = spans[j];
      // Reading the same memory twice is harmless; a write under another
      // buffer is a race inside the kernel. An empty span is never touched.
      // c == d is the in-place call, and a partial c/d overlap is
      // checkKGroupedArgs's to report.
      if ((!x.written && !y.written) || x.bytes == 0 || y.bytes == 0)
        continue;
      if (std::string(x.name) == "c" && std::string(y.name) == "d")
        continue;
      if (x.address < y.address + y.bytes && y.address < x.address + x.bytes) {
        const DeviceSpan &w = y.written ? y : x, &o = y.written ? x : y;
        return invalid(
            std::string("arguments '") + w.name + "' and '" + o.name +
            "' must not overlap (the kernel writes '" + w.name + "' while it " +
            (o.written ? "writes" : "reads") + " '" + o.name + "'), got " +
            w.name + " = " + hex(w.address) + " with " +
            std::to_string(w.bytes) + " bytes and " + o.name + " = " +
            hex(o.address) + " with " + std::to_string(o.bytes) + " bytes");
      }
    }
  }
  return Status::success();
}

Status dgemm::runtime::checkBufferContexts(
    PFN_cuPointerGetAttribute_v4000 getAttribute,
    PFN_cuDeviceCanAccessPeer_v4000 canAccessPeer, CUcontext context,
    CUdevice device, const KGroupedArgs &args, uint64_t workspaceBytes) {
  if (!getAttribute)
    return Status::success();
  std::vector<DeviceSpan> spans;
  if (Status s = deviceSpans(args, workspaceBytes, spans); !s.ok())
    return s;
  for (const DeviceSpan &span : spans) {
    // A buffer the kernel never touches (an empty K) is never addressed.
    if (span.bytes == 0)
      continue;
    CUdeviceptr ptr = CUdeviceptr(span.address);
    CUcontext owner = nullptr;
    // An error means the driver does not know the pointer (host memory on a
    // system that lets the device address it, or an older driver): nothing
    // to compare. No context: memory of no single context.
    if (getAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, ptr) !=
            CUDA_SUCCESS ||
        !owner || owner == context)
      continue;
    // Managed and memory-pool allocations are reachable by their device's
    // contexts whatever context allocated them.
    uint64_t managed = 0;
    if (getAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr) ==
            CUDA_SUCCESS &&
        managed)
      continue;
    void *pool = nullptr;
    if (getAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, ptr) ==
            CUDA_SUCCESS &&
        pool)
      continue;
    int ordinal = -1;
    if (getAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr) !=
        CUDA_SUCCESS)
      continue;
    std::string arg =
        std::string("argument '") + span.name + "' (" + hex(span.address) + ")";
    // CUdevice values are the ordinals.
    if (ordinal == int(device))
      return invalid(arg +
                     " was allocated in another CUDA context than the "
                     "stream's, on the same device " +
                     std::to_string(ordinal) +
                     ": a context cannot address another's memory (allocate "
                     "it in the stream's context, e.g. the primary one)");
    int peer = 1;
    if (canAccessPeer &&
        canAccessPeer(&peer, device, CUdevice(ordinal)) == CUDA_SUCCESS &&
        !peer)
      return invalid(arg + " is memory of device " + std::to_string(ordinal) +
                     ", which the stream's device " + std::to_string(device) +
                     " cannot access as a peer");
  }
  return Status::success();
}

const char *dgemm::runtime::runtimeVersion() {
  static const std::string version = std::string(DGEMM_RUNTIME_VERSION) +
                                     " (kernel ABI " +
                                     std::to_string(kKernelAbiVersion) + ")";
  return version.c_str();
}
