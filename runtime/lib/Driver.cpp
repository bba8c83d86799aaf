//===- Driver.cpp - The CUDA driver, loaded at run time -------------------===//

#include "dgemm/Runtime/Driver.h"

#include <dlfcn.h>

#include <type_traits>

using namespace dgemm::runtime;

namespace {

/// cuGetProcAddress as the CUDA 12 driver exports it (cuGetProcAddress_v2),
/// or the CUDA 11.3 form without the query result.
struct ProcResolver {
  PFN_cuGetProcAddress_v12000 v2 = nullptr;
  PFN_cuGetProcAddress_v11030 v1 = nullptr;

  void *resolve(const char *name, int version) const {
    void *fn = nullptr;
    CUresult result;
    // Legacy-stream variants: stream 0 means the legacy default stream, as
    // it does for PyTorch's default stream.
    if (v2) {
      CUdriverProcAddressQueryResult found;
      result =
          v2(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &found);
      if (found != CU_GET_PROC_ADDRESS_SUCCESS)
        return nullptr;
    } else {
      result = v1(name, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
    }
    return result == CUDA_SUCCESS ? fn : nullptr;
  }
};

Status noDriver(const std::string &message) {
  return Status::error(ErrorCode::NoDriver,
                       "no CUDA driver/device: " + message);
}

} // namespace

Status dgemm::runtime::loadDriverFrom(const char *libraryName, DriverApi &api) {
  api = DriverApi();
  // RTLD_LOCAL: the driver's symbols must not satisfy other libraries' lookups
  // on our behalf.
  void *handle = dlopen(libraryName, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    return noDriver(std::string("cannot load the CUDA driver: dlopen(\"") +
                    libraryName + "\") failed: " + (why ? why : "unknown"));
  }
  api.libraryHandle = handle;

  ProcResolver resolver;
  resolver.v2 = reinterpret_cast<PFN_cuGetProcAddress_v12000>(
      dlsym(handle, "cuGetProcAddress_v2"));
  if (!resolver.v2)
    resolver.v1 = reinterpret_cast<PFN_cuGetProcAddress_v11030>(
        dlsym(handle, "cuGetProcAddress"));
  if (!resolver.v2 && !resolver.v1)
    return noDriver(std::string(libraryName) +
                    " exports no cuGetProcAddress (driver older than CUDA "
                    "11.3; CUDA 12.0 or newer is required)");

  auto getVersion = reinterpret_cast<PFN_cuDriverGetVersion_v2020>(
      dlsym(handle, "cuDriverGetVersion"));
  if (!getVersion || getVersion(&api.driverVersion) != CUDA_SUCCESS)
    return noDriver(std::string(libraryName) +
                    ": cuDriverGetVersion is missing or failed");
  // cuTensorMapEncodeTiled and the sm_90a PTX need CUDA 12.
  if (api.driverVersion < 12000)
    return noDriver("the CUDA driver supports CUDA " +
                    std::to_string(api.driverVersion / 1000) + "." +
                    std::to_string(api.driverVersion % 1000 / 10) +
                    "; 12.0 or newer is required");

  std::string missing;
  auto get = [&](auto &fn, const char *name, int version) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
        resolver.resolve(name, version));
    if (!fn)
      missing += (missing.empty() ? "" : ", ") + std::string(name);
  };
// The version is the one in the PFN type's name (cudaTypedefs.h).
#define DGEMM_RESOLVE(name, version) get(api.name, #name, version)
  DGEMM_RESOLVE(cuGetErrorName, 6000);
  DGEMM_RESOLVE(cuGetErrorString, 6000);
  DGEMM_RESOLVE(cuInit, 2000);
  DGEMM_RESOLVE(cuDeviceGet, 2000);
  DGEMM_RESOLVE(cuDeviceGetCount, 2000);
  DGEMM_RESOLVE(cuDeviceGetName, 2000);
  DGEMM_RESOLVE(cuDeviceGetAttribute, 2000);
  DGEMM_RESOLVE(cuDevicePrimaryCtxRetain, 7000);
  DGEMM_RESOLVE(cuDevicePrimaryCtxRelease, 11000);
  DGEMM_RESOLVE(cuCtxGetCurrent, 4000);
  DGEMM_RESOLVE(cuCtxSetCurrent, 4000);
  DGEMM_RESOLVE(cuCtxPushCurrent, 4000);
  DGEMM_RESOLVE(cuCtxPopCurrent, 4000);
  DGEMM_RESOLVE(cuCtxGetDevice, 2000);
  DGEMM_RESOLVE(cuCtxSynchronize, 2000);
  DGEMM_RESOLVE(cuStreamGetCtx, 9020);
  DGEMM_RESOLVE(cuStreamCreate, 2000);
  DGEMM_RESOLVE(cuStreamDestroy, 4000);
  DGEMM_RESOLVE(cuStreamSynchronize, 2000);
  DGEMM_RESOLVE(cuStreamIsCapturing, 10000);
  DGEMM_RESOLVE(cuStreamBeginCapture, 10010);
  DGEMM_RESOLVE(cuStreamEndCapture, 10000);
  DGEMM_RESOLVE(cuGraphInstantiateWithFlags, 11040);
  DGEMM_RESOLVE(cuGraphLaunch, 10000);
  DGEMM_RESOLVE(cuGraphExecDestroy, 10000);
  DGEMM_RESOLVE(cuGraphDestroy, 10000);
  DGEMM_RESOLVE(cuModuleLoadData, 2000);
  DGEMM_RESOLVE(cuModuleLoadDataEx, 2010);
  DGEMM_RESOLVE(cuModuleGetFunction, 2000);
  DGEMM_RESOLVE(cuModuleUnload, 2000);
  DGEMM_RESOLVE(cuFuncSetAttribute, 9000);
  DGEMM_RESOLVE(cuFuncGetAttribute, 2020);
  DGEMM_RESOLVE(cuLaunchKernel, 4000);
  DGEMM_RESOLVE(cuLaunchKernelEx, 11060);
  DGEMM_RESOLVE(cuTensorMapEncodeTiled, 12000);
  DGEMM_RESOLVE(cuMemGetInfo, 3020);
  DGEMM_RESOLVE(cuMemAlloc, 3020);
  DGEMM_RESOLVE(cuMemFree, 3020);
  DGEMM_RESOLVE(cuMemAllocAsync, 11020);
  DGEMM_RESOLVE(cuMemFreeAsync, 11020);
  DGEMM_RESOLVE(cuMemcpyHtoD, 3020);
  DGEMM_RESOLVE(cuMemcpyDtoH, 3020);
  DGEMM_RESOLVE(cuMemcpyDtoDAsync, 3020);
  DGEMM_RESOLVE(cuMemsetD32Async, 3020);
#undef DGEMM_RESOLVE
  if (!missing.empty())
    return noDriver(std::string(libraryName) +
                    ": cuGetProcAddress did not resolve: " + missing);

  CUresult init = api.cuInit(0);
  if (init != CUDA_SUCCESS)
    return noDriver("cuInit failed: " + describeCuResult(api, init));
  int count = 0;
  CUresult countResult = api.cuDeviceGetCount(&count);
  if (countResult != CUDA_SUCCESS)
    return noDriver("cuDeviceGetCount failed: " +
                    describeCuResult(api, countResult));
  if (count == 0)
    return noDriver("the CUDA driver reports no device");
  return Status::success();
}

Status dgemm::runtime::getDriver(const DriverApi *&api) {
  struct Loaded {
    DriverApi api;
    Status status;
    Loaded() { status = loadDriverFrom(kDriverLibrary, api); }
  };
  // A function-local static is initialized exactly once, thread-safely.
  static const Loaded loaded;
  api = loaded.status.ok() ? &loaded.api : nullptr;
  return loaded.status;
}

std::string dgemm::runtime::describeCuResult(const DriverApi &api,
                                             CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(result, &text);
  std::string out = name ? name : "CUresult " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

Status dgemm::runtime::checkCu(const DriverApi &api, CUresult result,
                               const char *what) {
  if (result == CUDA_SUCCESS)
    return Status::success();
  return Status::error(ErrorCode::CudaError, std::string(what) + " failed: " +
                                                 describeCuResult(api, result));
}
