//===- Context.cpp - CUDA contexts, devices and scratch buffers -----------===//

#include "dgemm/Runtime/Context.h"

#include "DriverExtras.h"

#include <dlfcn.h>

#include <algorithm>
#include <map>
#include <memory>
#include <thread>
#include <tuple>
#include <type_traits>
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

/// Which buffer of the runtime's own serves launches on (context, stream).
/// Handles are reused after a stream or context is destroyed, and a reused
/// handle must not find the old buffer: work of the destroyed stream may
/// still be running on it. So the driver's unique ids are used where it has
/// them. CU_STREAM_PER_THREAD names a different stream in every host thread,
/// hence the thread in the key.
struct StreamKey {
  uint64_t context = 0;
  uint64_t stream = 0;
  bool uniqueStreamId = false;
  std::thread::id thread;

  bool operator<(const StreamKey &other) const {
    return std::tie(context, stream, uniqueStreamId, thread) <
           std::tie(other.context, other.stream, other.uniqueStreamId,
                    other.thread);
  }
};

StreamKey streamKey(const DriverApi &api, CUcontext context, CUstream stream) {
  StreamKey key;
  key.context = contextKey(api, context);
  // The legacy stream under either of its names.
  if (stream == nullptr)
    stream = CU_STREAM_LEGACY;
  if (stream == CU_STREAM_PER_THREAD)
    key.thread = std::this_thread::get_id();
  unsigned long long id = 0;
  const DriverExtras &extras = driverExtras(api);
  if (extras.cuStreamGetId &&
      extras.cuStreamGetId(stream, &id) == CUDA_SUCCESS) {
    key.stream = id;
    key.uniqueStreamId = true;
  } else {
    key.stream = reinterpret_cast<uintptr_t>(stream);
  }
  return key;
}

} // namespace

const DriverExtras &dgemm::runtime::driverExtras(const DriverApi &api) {
  static std::mutex mutex;
  static std::map<void *, std::unique_ptr<DriverExtras>> resolved;
  static const DriverExtras none;
  if (!api.libraryHandle)
    return none;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<DriverExtras> &extras = resolved[api.libraryHandle];
  if (!extras) {
    extras = std::make_unique<DriverExtras>();
    // Each has a single version, so its exported name is the one meant.
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          dlsym(api.libraryHandle, name));
    };
    get(extras->cuCtxGetId, "cuCtxGetId");
    get(extras->cuStreamGetId, "cuStreamGetId");
    get(extras->cuPointerGetAttribute, "cuPointerGetAttribute");
    get(extras->cuDeviceCanAccessPeer, "cuDeviceCanAccessPeer");
  }
  return *extras;
}

uint64_t dgemm::runtime::contextKey(const DriverApi &api, CUcontext context) {
  unsigned long long id = 0;
  const DriverExtras &extras = driverExtras(api);
  if (context && extras.cuCtxGetId &&
      extras.cuCtxGetId(context, &id) == CUDA_SUCCESS)
    return id;
  return reinterpret_cast<uintptr_t>(context);
}

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
  // By id, not handle: a later context that reuses the handle may be on
  // another device.
  static std::map<uint64_t, DeviceInfo> cache;
  uint64_t key = contextKey(api, context);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key);
  if (it != cache.end()) {
    info = it->second;
    return Status::success();
  }
  if (Status s = queryDeviceInfo(api, device, info); !s.ok())
    return s;
  cache.emplace(key, info);
  return Status::success();
}

Status dgemm::runtime::acquireInternalWorkspace(
    const DriverApi &api, CUcontext context, CUstream stream, uint64_t bytes,
    CUdeviceptr &buffer, std::unique_lock<std::mutex> &lock) {
  // One mutex per buffer, so that launches on different streams neither
  // wait for each other nor for another stream's allocation; the map's own
  // mutex is held only to find the entry. Entries are never erased, so an
  // entry (and its mutex) outlives every lock on it.
  struct Buffer {
    std::mutex mutex;
    CUdeviceptr ptr = 0;
    uint64_t bytes = 0;
  };
  static std::mutex mapMutex;
  static std::map<StreamKey, std::unique_ptr<Buffer>> buffers;

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

  StreamKey key = streamKey(api, context, stream);
  Buffer *entry = nullptr;
  {
    std::lock_guard<std::mutex> mapLock(mapMutex);
    std::unique_ptr<Buffer> &slot = buffers[key];
    if (!slot)
      slot = std::make_unique<Buffer>();
    entry = slot.get();
  }
  lock = std::unique_lock<std::mutex>(entry->mutex);
  if (entry->bytes < bytes) {
    // Grow geometrically so that a slowly growing problem size does not
    // reallocate on every call.
    uint64_t doubled = 0;
    uint64_t newBytes = __builtin_mul_overflow(entry->bytes, 2, &doubled)
                            ? bytes
                            : std::max(bytes, doubled);
    if (entry->ptr) {
      if (Status s = checkCu(api, api.cuMemFreeAsync(entry->ptr, stream),
                             "cuMemFreeAsync(internal workspace)");
          !s.ok())
        return s;
      entry->ptr = 0;
      entry->bytes = 0;
    }
    CUdeviceptr ptr = 0;
    if (Status s = checkCu(api, api.cuMemAllocAsync(&ptr, newBytes, stream),
                           "cuMemAllocAsync(internal workspace)");
        !s.ok())
      return s;
    entry->ptr = ptr;
    entry->bytes = newBytes;
  }
  buffer = entry->ptr;
  return Status::success();
}
