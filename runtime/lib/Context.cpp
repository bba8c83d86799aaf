//===- Context.cpp - CUDA contexts, devices and scratch buffers -----------===//

#include "dgemm/Runtime/Context.h"

#include <algorithm>
#include <map>
#include <utility>

using namespace dgemm::runtime;

namespace {

bool isSpecialStream(CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY ||
         stream == CU_STREAM_PER_THREAD;
}

/// Device 0's primary context, retained once for the process (never
/// released: callers may keep using it after we return).
Status primaryContext(const DriverApi &api, CUcontext &context) {
  static std::mutex mutex;
  static CUcontext primary = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!primary) {
    CUdevice device;
    if (Status s = checkCu(api, api.cuDeviceGet(&device, 0), "cuDeviceGet(0)");
        !s.ok())
      return s;
    if (Status s = checkCu(api, api.cuDevicePrimaryCtxRetain(&primary, device),
                           "cuDevicePrimaryCtxRetain");
        !s.ok())
      return s;
  }
  context = primary;
  return Status::success();
}

} // namespace

ScopedContext::~ScopedContext() {
  if (pushed_) {
    CUcontext popped;
    api_->cuCtxPopCurrent(&popped);
  }
}

Status ScopedContext::enter(const DriverApi &api, CUstream stream) {
  api_ = &api;
  CUcontext current = nullptr;
  if (Status s = checkCu(api, api.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
      !s.ok())
    return s;
  CUcontext target = current;
  if (!isSpecialStream(stream)) {
    if (Status s = checkCu(api, api.cuStreamGetCtx(stream, &target),
                           "cuStreamGetCtx(stream)");
        !s.ok())
      return s;
  } else if (!target) {
    if (Status s = primaryContext(api, target); !s.ok())
      return s;
  }
  if (target != current) {
    if (Status s =
            checkCu(api, api.cuCtxPushCurrent(target), "cuCtxPushCurrent");
        !s.ok())
      return s;
    pushed_ = true;
  }
  context_ = target;
  return checkCu(api, api.cuCtxGetDevice(&device_), "cuCtxGetDevice");
}

Status dgemm::runtime::queryDeviceInfo(const DriverApi &api, CUdevice device,
                                       DeviceInfo &info) {
  info.device = device;
  int pools = 0;
  const struct {
    CUdevice_attribute attribute;
    int *value;
    const char *name;
  } queries[] = {
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.smCount,
       "MULTIPROCESSOR_COUNT"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &info.maxSmemOptin, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.ccMajor,
       "COMPUTE_CAPABILITY_MAJOR"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.ccMinor,
       "COMPUTE_CAPABILITY_MINOR"},
      {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, &pools,
       "MEMORY_POOLS_SUPPORTED"},
  };
  for (const auto &q : queries) {
    std::string what = std::string("cuDeviceGetAttribute(") + q.name + ")";
    if (Status s =
            checkCu(api, api.cuDeviceGetAttribute(q.value, q.attribute, device),
                    what.c_str());
        !s.ok())
      return s;
  }
  info.memoryPools = pools != 0;
  // The memory's clock and bus width only tune the heuristics
  // (peakMemoryBandwidthGBps): a driver that does not report them leaves
  // them unknown rather than failing the call.
  if (api.cuDeviceGetAttribute(&info.memoryClockKHz,
                               CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
                               device) != CUDA_SUCCESS)
    info.memoryClockKHz = 0;
  if (api.cuDeviceGetAttribute(&info.memoryBusWidthBits,
                               CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
                               device) != CUDA_SUCCESS)
    info.memoryBusWidthBits = 0;
  return Status::success();
}

int dgemm::runtime::peakMemoryBandwidthGBps(const DeviceInfo &info) {
  if (info.memoryClockKHz <= 0 || info.memoryBusWidthBits <= 0)
    return 0;
  // kHz x 2 transfers x bytes per transfer = kB/s; / 1e6 = GB/s.
  double gbps = 2.0 * info.memoryClockKHz * (info.memoryBusWidthBits / 8) / 1e6;
  return int(gbps + 0.5);
}

Status dgemm::runtime::getDeviceInfo(const DriverApi &api, CUcontext context,
                                     CUdevice device, DeviceInfo &info) {
  static std::mutex mutex;
  static std::map<CUcontext, DeviceInfo> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(context);
  if (it != cache.end()) {
    info = it->second;
    return Status::success();
  }
  if (Status s = queryDeviceInfo(api, device, info); !s.ok())
    return s;
  cache.emplace(context, info);
  return Status::success();
}

Status dgemm::runtime::acquireInternalWorkspace(
    const DriverApi &api, CUcontext context, CUstream stream, uint64_t bytes,
    CUdeviceptr &buffer, std::unique_lock<std::mutex> &lock) {
  struct Buffer {
    CUdeviceptr ptr = 0;
    uint64_t bytes = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<CUcontext, CUstream>, Buffer> buffers;

  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (Status s = checkCu(api, api.cuStreamIsCapturing(stream, &capture),
                         "cuStreamIsCapturing");
      !s.ok())
    return s;
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return Status::error(ErrorCode::InvalidArgument,
                         "argument 'workspace' must not be null while the "
                         "stream is being captured: pass a workspace of "
                         "dgemm_k_grouped_workspace_bytes() bytes");

  lock = std::unique_lock<std::mutex>(mutex);
  Buffer &entry = buffers[{context, stream}];
  if (entry.bytes < bytes) {
    // Grow geometrically so that a slowly growing problem size does not
    // reallocate on every call.
    uint64_t newBytes = std::max<uint64_t>(bytes, 2 * entry.bytes);
    if (entry.ptr) {
      if (Status s = checkCu(api, api.cuMemFreeAsync(entry.ptr, stream),
                             "cuMemFreeAsync(internal workspace)");
          !s.ok())
        return s;
      entry = Buffer();
    }
    CUdeviceptr ptr = 0;
    if (Status s = checkCu(api, api.cuMemAllocAsync(&ptr, newBytes, stream),
                           "cuMemAllocAsync(internal workspace)");
        !s.ok())
      return s;
    entry.ptr = ptr;
    entry.bytes = newBytes;
  }
  buffer = entry.ptr;
  return Status::success();
}
