//===- Launch.cpp - What every kind's launch path shares ------------------===//

#include "Launch.h"

#include "dgemm/Runtime/KernelBundle.h"

#include <string>

using namespace dgemm::runtime;

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

} // namespace

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
