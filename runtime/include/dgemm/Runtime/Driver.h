//===- Driver.h - The CUDA driver, loaded at run time -----------*- C++ -*-===//
//
// The runtime never links libcuda: it is dlopen'ed on first use, so the
// library loads (and its argument checks run) on machines without a GPU.
// Every entry point is resolved through cuGetProcAddress at the CUDA version
// that matches the function-pointer type used here, so a newer driver that
// changed a signature (cuCtxGetDevice, cuStreamGetCtx, ...) still hands back
// the variant this code was written against.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_DRIVER_H
#define DGEMM_RUNTIME_DRIVER_H

#include "dgemm/Runtime/Status.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace dgemm {
namespace runtime {

/// The driver entry points the runtime and its tests use.
struct DriverApi {
  void *libraryHandle = nullptr;
  /// cuDriverGetVersion's answer, e.g. 13000.
  int driverVersion = 0;

  PFN_cuGetErrorName_v6000 cuGetErrorName = nullptr;
  PFN_cuGetErrorString_v6000 cuGetErrorString = nullptr;
  PFN_cuInit_v2000 cuInit = nullptr;
  PFN_cuDeviceGet_v2000 cuDeviceGet = nullptr;
  PFN_cuDeviceGetCount_v2000 cuDeviceGetCount = nullptr;
  PFN_cuDeviceGetName_v2000 cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute_v2000 cuDeviceGetAttribute = nullptr;
  PFN_cuDevicePrimaryCtxRetain_v7000 cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v11000 cuDevicePrimaryCtxRelease = nullptr;
  PFN_cuCtxGetCurrent_v4000 cuCtxGetCurrent = nullptr;
  PFN_cuCtxSetCurrent_v4000 cuCtxSetCurrent = nullptr;
  PFN_cuCtxPushCurrent_v4000 cuCtxPushCurrent = nullptr;
  PFN_cuCtxPopCurrent_v4000 cuCtxPopCurrent = nullptr;
  PFN_cuCtxGetDevice_v2000 cuCtxGetDevice = nullptr;
  PFN_cuCtxSynchronize_v2000 cuCtxSynchronize = nullptr;
  PFN_cuStreamGetCtx_v9020 cuStreamGetCtx = nullptr;
  PFN_cuStreamCreate_v2000 cuStreamCreate = nullptr;
  PFN_cuStreamDestroy_v4000 cuStreamDestroy = nullptr;
  PFN_cuStreamSynchronize_v2000 cuStreamSynchronize = nullptr;
  PFN_cuStreamIsCapturing_v10000 cuStreamIsCapturing = nullptr;
  PFN_cuStreamBeginCapture_v10010 cuStreamBeginCapture = nullptr;
  PFN_cuStreamEndCapture_v10000 cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiateWithFlags_v11040 cuGraphInstantiateWithFlags = nullptr;
  PFN_cuGraphLaunch_v10000 cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy_v10000 cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy_v10000 cuGraphDestroy = nullptr;
  PFN_cuModuleLoadData_v2000 cuModuleLoadData = nullptr;
  PFN_cuModuleLoadDataEx_v2010 cuModuleLoadDataEx = nullptr;
  PFN_cuModuleGetFunction_v2000 cuModuleGetFunction = nullptr;
  PFN_cuModuleUnload_v2000 cuModuleUnload = nullptr;
  PFN_cuFuncSetAttribute_v9000 cuFuncSetAttribute = nullptr;
  PFN_cuFuncGetAttribute_v2020 cuFuncGetAttribute = nullptr;
  PFN_cuLaunchKernel_v4000 cuLaunchKernel = nullptr;
  PFN_cuLaunchKernelEx_v11060 cuLaunchKernelEx = nullptr;
  PFN_cuTensorMapEncodeTiled_v12000 cuTensorMapEncodeTiled = nullptr;
  PFN_cuMemGetInfo_v3020 cuMemGetInfo = nullptr;
  PFN_cuMemAlloc_v3020 cuMemAlloc = nullptr;
  PFN_cuMemFree_v3020 cuMemFree = nullptr;
  PFN_cuMemAllocAsync_v11020 cuMemAllocAsync = nullptr;
  PFN_cuMemFreeAsync_v11020 cuMemFreeAsync = nullptr;
  PFN_cuMemcpyHtoD_v3020 cuMemcpyHtoD = nullptr;
  PFN_cuMemcpyDtoH_v3020 cuMemcpyDtoH = nullptr;
  PFN_cuMemcpyDtoDAsync_v3020 cuMemcpyDtoDAsync = nullptr;
  PFN_cuMemsetD32Async_v3020 cuMemsetD32Async = nullptr;
};

/// The library getDriver loads.
inline constexpr const char *kDriverLibrary = "libcuda.so.1";

/// Loads `libraryName`, resolves every entry point of DriverApi, calls cuInit
/// and checks that a device exists. Not cached: each call dlopens again (the
/// handle is kept in `api`). Fails with ErrorCode::NoDriver when the library,
/// a symbol or a device is missing.
Status loadDriverFrom(const char *libraryName, DriverApi &api);

/// loadDriverFrom(kDriverLibrary) done once per process, thread-safe; later
/// calls return the first outcome. On success `api` points to the table.
Status getDriver(const DriverApi *&api);

/// "CUDA_ERROR_X (description)" for `result`.
std::string describeCuResult(const DriverApi &api, CUresult result);

/// Status::error(CudaError, "<what> failed: CUDA_ERROR_X (...)") for a failed
/// driver call, success for CUDA_SUCCESS.
Status checkCu(const DriverApi &api, CUresult result, const char *what);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_DRIVER_H
