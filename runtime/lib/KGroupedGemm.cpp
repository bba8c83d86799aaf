//===- KGroupedGemm.cpp - The k-grouped FP8 GEMM, launch path -------------===//

#include "dgemm/Runtime/KGroupedGemm.h"

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/Driver.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/ModuleCache.h"
#include "dgemm/Runtime/TensorMaps.h"

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

Status checkDevice(const DriverApi &api, const DeviceInfo &device) {
  // The bundle is sm_90a PTX, which only a compute capability 9.0 device runs.
  if (device.ccMajor == 9 && device.ccMinor == 0)
    return Status::success();
  char name[256] = "unknown";
  api.cuDeviceGetName(name, sizeof(name), device.device);
  return Status::error(ErrorCode::UnsupportedDevice,
                       std::string("device '") + name +
                           "' has compute capability " +
                           std::to_string(device.ccMajor) + "." +
                           std::to_string(device.ccMinor) +
                           "; the kernels are built for sm_90a (9.0)");
}

/// The driver, the context of `stream` made current (docs/Runtime.md), its
/// device's facts, and the configuration a call with these sizes launches.
Status enterAndChoose(CUstream stream, int64_t m, int64_t n, int numGroups,
                      const int *ksHost, bool inPlace, const DriverApi *&api,
                      ScopedContext &scope, DeviceInfo &device,
                      KernelConfig &config) {
  if (Status s = getDriver(api); !s.ok())
    return s;
  if (Status s = scope.enter(*api, stream); !s.ok())
    return s;
  if (Status s = getDeviceInfo(*api, scope.context(), scope.device(), device);
      !s.ok())
    return s;
  if (Status s = checkDevice(*api, device); !s.ok())
    return s;
  Target target = targetFor(device);
  config = chooseKGroupedConfig(m, n, numGroups, ksHost, target, inPlace);
  if (std::string why = dgemm::heuristics::checkConfig(config, target); !why.empty())
    return Status::error(ErrorCode::UnsupportedDevice,
                         "no kernel configuration fits this device: " + why);
  return Status::success();
}

/// The chosen configuration's kernel from the bundle directory, loaded into
/// the scope's context on first use.
Status chosenKernel(const DriverApi &api, const ScopedContext &scope,
                    const DeviceInfo &device, const KernelConfig &config,
                    const LoadedKernel *&kernel) {
  std::string dir;
  if (Status s = resolveKernelDir(dir); !s.ok())
    return s;
  return getKernel(api, scope.context(), device, dir, config, kernel);
}

} // namespace

Status dgemm::runtime::kGroupedFp8GemmNtContiguous(const KGroupedArgs &args,
                                                   CUstream stream) {
  KGroupedShape shape;
  if (Status s = checkKGroupedArgs(args, &shape); !s.ok())
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
  if (config.inPlaceOnly && args.c != args.d)
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
                    &band};

  const KernelMeta &meta = kernel->meta;
  CUlaunchAttribute cluster = {};
  cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  // The grid is one-dimensional, so a cluster is its CTAs along x.
  cluster.value.clusterDim.x = unsigned(meta.clusterM * meta.clusterN);
  cluster.value.clusterDim.y = 1;
  cluster.value.clusterDim.z = 1;
  CUlaunchConfig launch = {};
  launch.gridDimX = unsigned(gridX);
  launch.gridDimY = 1;
  launch.gridDimZ = 1;
  launch.blockDimX = unsigned(meta.threads);
  launch.blockDimY = 1;
  launch.blockDimZ = 1;
  launch.sharedMemBytes = unsigned(meta.smemBytes);
  launch.hStream = stream;
  launch.attrs = cluster.value.clusterDim.x != 1 ? &cluster : nullptr;
  launch.numAttrs = cluster.value.clusterDim.x != 1 ? 1 : 0;
  std::string what = "cuLaunchKernelEx(" + meta.entry + ")";
  return checkCu(
      *api, api->cuLaunchKernelEx(&launch, kernel->function, params, nullptr),
      what.c_str());
}

Status dgemm::runtime::kGroupedFp8GemmNtContiguous(
    const void *a, const float *sfa, const void *b, const float *sfb, float *d,
    const float *c, int64_t m, int64_t n, int numGroups, const int *ksHost,
    const int *ksDevice, void *workspace, size_t workspaceBytes,
    CUstream stream) {
  KGroupedArgs args;
  args.a = a;
  args.sfa = sfa;
  args.b = b;
  args.sfb = sfb;
  args.d = d;
  args.c = c;
  args.m = m;
  args.n = n;
  args.numGroups = numGroups;
  args.ksHost = ksHost;
  args.ksDevice = ksDevice;
  args.workspace = workspace;
  args.workspaceBytes = workspaceBytes;
  return kGroupedFp8GemmNtContiguous(args, stream);
}

size_t dgemm::runtime::kGroupedWorkspaceBytes(int64_t m, int64_t n,
                                              int numGroups,
                                              const int *ksHost) {
  Target target;
  const DriverApi *api = nullptr;
  if (getDriver(api).ok()) {
    CUcontext current = nullptr;
    CUdevice device = 0;
    bool haveDevice = api->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current
                          ? api->cuCtxGetDevice(&device) == CUDA_SUCCESS
                          : api->cuDeviceGet(&device, 0) == CUDA_SUCCESS;
    DeviceInfo info;
    if (haveDevice && queryDeviceInfo(*api, device, info).ok())
      target = targetFor(info);
  }
  return kGroupedWorkspaceBytesFor(m, n, numGroups, ksHost, target);
}

Status dgemm::runtime::kGroupedKernelInfo(int64_t m, int64_t n, int numGroups,
                                          const int *ksHost, bool inPlace,
                                          KGroupedKernelInfo &info) {
  auto invalid = [](const std::string &message) {
    return Status::error(ErrorCode::InvalidArgument, message);
  };
  if (m < 1)
    return invalid("argument 'm' must be >= 1, got " + std::to_string(m));
  if (n < 1)
    return invalid("argument 'n' must be >= 1, got " + std::to_string(n));
  if (numGroups < 1)
    return invalid("argument 'num_groups' must be >= 1, got " +
                   std::to_string(numGroups));
  if (!ksHost)
    return invalid("argument 'ks' must not be null");
  for (int g = 0; g < numGroups; ++g)
    if (ksHost[g] < 0 || ksHost[g] % 128 != 0)
      return invalid("argument 'ks' must hold multiples of 128 >= 0, got " +
                     std::to_string(ksHost[g]) + " for group " +
                     std::to_string(g));

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
  return checkWorkspaceSize(
      args, kGroupedWorkspaceBytesFor(args.m, args.n, int(args.numGroups),
                                      args.ksHost, Target()));
}

const char *dgemm::runtime::runtimeVersion() {
  static const std::string version = std::string(DGEMM_RUNTIME_VERSION) +
                                     " (kernel ABI " +
                                     std::to_string(kKernelAbiVersion) + ")";
  return version.c_str();
}
