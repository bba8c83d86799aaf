//===- Context.h - CUDA contexts, devices and scratch buffers ---*- C++ -*-===//
//
// The runtime works in the context the caller's stream belongs to, so it
// composes with PyTorch (primary context) and with explicit contexts alike.
// Per-context facts and buffers are cached for the life of the process.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_CONTEXT_H
#define DGEMM_RUNTIME_CONTEXT_H

#include "dgemm/Runtime/Driver.h"

#include <cuda.h>

#include <cstdint>
#include <mutex>

namespace dgemm {
namespace runtime {

/// Makes the context of a stream current for its lifetime: the stream's own
/// context for a created stream; for the null/legacy/per-thread stream the
/// current context, or device 0's primary context if none is current.
class ScopedContext {
public:
  ScopedContext() = default;
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;
  ~ScopedContext();

  Status enter(const DriverApi &api, CUstream stream);

  CUcontext context() const { return context_; }
  CUdevice device() const { return device_; }

private:
  const DriverApi *api_ = nullptr;
  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  bool pushed_ = false;
};

/// What the launch needs to know about a device.
struct DeviceInfo {
  CUdevice device = 0;
  int smCount = 0;
  int maxSmemOptin = 0;
  int ccMajor = 0, ccMinor = 0;
  bool memoryPools = false;
  /// The memory's peak clock (kHz) and bus width (bits); 0 where the driver
  /// does not report them.
  int memoryClockKHz = 0, memoryBusWidthBits = 0;
};

/// Peak DRAM bandwidth in GB/s from the memory clock (two transfers per
/// clock) and bus width; 0 when either is unknown.
int peakMemoryBandwidthGBps(const DeviceInfo &info);

/// Queries `device` (no context needed).
Status queryDeviceInfo(const DriverApi &api, CUdevice device, DeviceInfo &info);

/// queryDeviceInfo for the device of `context`, cached per context.
Status getDeviceInfo(const DriverApi &api, CUcontext context, CUdevice device,
                     DeviceInfo &info);

/// The runtime's own workspace for launches on (`context`, `stream`) when the
/// caller passes none: one buffer per pair, grown with stream-ordered
/// cuMemFreeAsync/cuMemAllocAsync on `stream` so a buffer in use by earlier
/// launches on the stream is never freed under them. Refuses while `stream`
/// is being captured (allocation is not capturable as a plain launch).
/// The returned lock must be held until the launch that uses the buffer has
/// been enqueued: a concurrent call on the same stream may replace it.
Status acquireInternalWorkspace(const DriverApi &api, CUcontext context,
                                CUstream stream, uint64_t bytes,
                                CUdeviceptr &buffer,
                                std::unique_lock<std::mutex> &lock);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_CONTEXT_H
