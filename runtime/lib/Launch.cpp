//===- Launch.cpp - What every kind's launch path shares ------------------===//

#include "Launch.h"

#include "dgemm/Heuristics/MGroupedConfig.h"
#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/Overrides.h"

#include <algorithm>
#include <memory>
#include <string>

using namespace dgemm::runtime;
namespace heuristics = dgemm::heuristics;

namespace {
Status invalid(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

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

} // namespace

Status
dgemm::runtime::checkPointers(std::initializer_list<PointerRule> pointers) {
  for (const PointerRule &p : pointers) {
    if (!p.name)
      continue;
    if (!p.p)
      return invalid(std::string("argument '") + p.name + "' must not be null");
    if (reinterpret_cast<uintptr_t>(p.p) % p.align != 0)
      return invalid(std::string("argument '") + p.name + "' must be " +
                     std::to_string(p.align) + "-byte aligned");
  }
  return Status::success();
}

Span dgemm::runtime::spanOf(const char *name, const void *p, int64_t bytes) {
  uintptr_t at = reinterpret_cast<uintptr_t>(p);
  return Span{name, at, at + uintptr_t(bytes)};
}

Status dgemm::runtime::checkOutputOverlap(const Span &d,
                                          std::initializer_list<Span> inputs) {
  for (const Span &in : inputs)
    if (in.begin != in.end && in.begin < d.end && d.begin < in.end)
      return invalid(std::string("argument 'd' must not overlap '") + in.name +
                     "' (the kernel writes d while reading it)");
  return Status::success();
}

Status dgemm::runtime::checkRowMappingArgs(heuristics::Kind kind, int64_t rows,
                                           int64_t numGroups,
                                           int64_t expectedM) {
  constexpr int64_t kMax = heuristics::kMaxProblemExtent;
  switch (kind) {
  case heuristics::Kind::Normal:
    if (numGroups != 1)
      return invalid("argument 'num_groups' must be 1 for the normal GEMM, "
                     "got " +
                     std::to_string(numGroups));
    break;
  case heuristics::Kind::MGroupedMasked:
    if (expectedM < 1 || expectedM > kMax)
      return invalid("argument 'expected_m' must be in [1, 2^31 - 1], got " +
                     std::to_string(expectedM));
    // Rows of A's map and of d are 32-bit coordinates in the kernel.
    if (numGroups * rows > kMax)
      return invalid("argument 'num_groups * m_max' must be <= 2^31 - 1 (the "
                     "rows of a and d), got " +
                     std::to_string(numGroups * rows));
    break;
  case heuristics::Kind::MGroupedContiguousPsum:
    if (expectedM < 0 || expectedM > kMax)
      return invalid("argument 'expected_m' must be 0 (none) or in [1, 2^31 "
                     "- 1], got " +
                     std::to_string(expectedM));
    break;
  default:
    break;
  }
  return Status::success();
}

int64_t dgemm::runtime::plannedRows(heuristics::Kind kind, int64_t rows,
                                    int64_t expectedM, int64_t numGroups) {
  if (kind == heuristics::Kind::MGroupedMasked)
    return expectedM;
  if (kind != heuristics::Kind::MGroupedContiguousPsum || expectedM <= 0)
    return rows;
  int64_t align = heuristics::kMGroupedAlignment;
  int64_t segment = (expectedM + align - 1) / align * align;
  // Both factors are below 2^31: the product fits.
  return std::min<int64_t>(heuristics::kMaxProblemExtent, numGroups * segment);
}

Status dgemm::runtime::applyEnvOverrides(heuristics::KernelConfig &config,
                                         const heuristics::Target &target) {
  std::shared_ptr<const EnvOverrides> env = envOverrides();
  if (!env->error.empty())
    return invalid(env->error);
  if (std::string why =
          heuristics::applyOverrides(config, env->config, target, nullptr);
      !why.empty())
    return invalid("DGEMM_* overrides: " + why);
  if (std::string why = heuristics::checkConfig(config, target); !why.empty())
    return Status::error(ErrorCode::UnsupportedDevice,
                         "no kernel configuration fits this device: " + why);
  return Status::success();
}

uint32_t dgemm::runtime::rasterBandOverride() {
  if (std::shared_ptr<const EnvOverrides> env = envOverrides();
      env->error.empty() && env->rasterBand)
    return *env->rasterBand;
  return 0;
}

Status dgemm::runtime::enterDevice(CUstream stream, const DriverApi *&api,
                                   ScopedContext &scope, DeviceInfo &device) {
  if (Status s = getDriver(api); !s.ok())
    return s;
  if (Status s = scope.enter(*api, stream); !s.ok())
    return s;
  if (Status s = getDeviceInfo(*api, scope.context(), scope.device(), device);
      !s.ok())
    return s;
  return checkDevice(*api, device);
}

/// The chosen configuration's kernel from the bundle directory, loaded into
/// the scope's context on first use.
Status dgemm::runtime::chosenKernel(const DriverApi &api,
                                    const ScopedContext &scope,
                                    const DeviceInfo &device,
                                    const heuristics::KernelConfig &config,
                    const LoadedKernel *&kernel) {
  std::string dir;
  if (Status s = resolveKernelDir(dir); !s.ok())
    return s;
  return getKernel(api, scope.context(), device, dir, config, kernel);
}


Status dgemm::runtime::launchPersistent(const DriverApi &api,
                                        const LoadedKernel &kernel,
                                        int64_t gridX, CUstream stream,
                                        void **params) {
  const KernelMeta &meta = kernel.meta;
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
      api, api.cuLaunchKernelEx(&launch, kernel.function, params, nullptr),
      what.c_str());
}

Status dgemm::runtime::launchRowMapped(const RowMappedLaunch &launch,
                                       CUstream stream,
                                       const ChooseConfig &choose,
                                       const DescribeMaps &describe) {
  const DriverApi *api = nullptr;
  ScopedContext scope;
  DeviceInfo device;
  if (Status s = enterDevice(stream, api, scope, device); !s.ok())
    return s;
  heuristics::KernelConfig config;
  if (Status s = choose(targetFor(device), config); !s.ok())
    return s;
  const LoadedKernel *kernel = nullptr;
  if (Status s = chosenKernel(*api, scope, device, config, kernel); !s.ok())
    return s;
  TensorMapSpec specs[kNumTensorMaps];
  describe(config, specs);
  CUtensorMap maps[kNumTensorMaps];
  for (int i = 0; i < kNumTensorMaps; ++i)
    if (Status s = encodeTensorMap(*api, specs[i], maps[i]); !s.ok())
      return s;

  // Extents below 2^31 and the tile count checked to fit 32 bits.
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  int64_t tiles = launch.tileGroups * ceilDiv(launch.m, config.blockM) *
                  ceilDiv(launch.n, config.blockN);
  int64_t gridX = std::max<int64_t>(
      1, std::min<int64_t>({tiles, device.smCount, config.numSMs}));
  // Parameter order and types: docs/KernelABI.md.
  auto pointer = [](const void *p) { return reinterpret_cast<CUdeviceptr>(p); };
  CUdeviceptr a = pointer(launch.a), b = pointer(launch.b),
              d = pointer(launch.d), rowArray = pointer(launch.rowArray),
              sfb = pointer(launch.sfb), none = 0;
  uint32_t m = uint32_t(launch.m), n = uint32_t(launch.n),
           groups = uint32_t(launch.numGroups), k = uint32_t(launch.k);
  uint32_t band = rasterBandOverride();
  void *params[] = {&maps[kMapA],
                    &maps[kMapB],
                    &maps[kMapSfa],
                    &maps[kMapSfb],
                    &maps[kMapD],
                    &a,
                    &b,
                    &d,
                    &none,
                    &rowArray,
                    &none,
                    &m,
                    &n,
                    &groups,
                    &band,
                    &sfb,
                    &k};
  return launchPersistent(*api, *kernel, gridX, stream, params);
}
