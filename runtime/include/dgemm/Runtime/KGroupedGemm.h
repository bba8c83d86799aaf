//===- KGroupedGemm.h - The k-grouped FP8 GEMM, C++ API ---------*- C++ -*-===//
//
// d[g] = c[g] + sum over g's K blocks of (A_g,kb . B_g,kb^T) * sfa (x) sfb,
// laid out as docs/KernelABI.md says. See docs/Runtime.md.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_KGROUPEDGEMM_H
#define DGEMM_RUNTIME_KGROUPEDGEMM_H

#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/Status.h"

#include "dgemm/Runtime/Validation.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dgemm {
namespace runtime {

/// Enqueues the GEMM on `stream` and returns without synchronizing. All
/// device pointers must stay valid, and ksDevice must hold ksHost's values,
/// until the kernel has run. With a caller-provided workspace the call
/// allocates and copies nothing on the device, so it may be captured into a
/// CUDA graph; with workspace == nullptr a per-(context, stream) buffer of the
/// runtime's own is used (not allowed during capture). Thread-safe.
Status kGroupedFp8GemmNtContiguous(const void *a, const float *sfa,
                                   const void *b, const float *sfb, float *d,
                                   const float *c, int64_t m, int64_t n,
                                   int numGroups, const int *ksHost,
                                   const int *ksDevice, void *workspace,
                                   size_t workspaceBytes, CUstream stream);

/// The same, with the arguments in a struct.
Status kGroupedFp8GemmNtContiguous(const KGroupedArgs &args, CUstream stream);

/// The heuristics' target for a device: its SM count, opt-in shared memory
/// and peak memory bandwidth (which selects the calibration of the measured
/// rules, heuristics::calibrationFor).
heuristics::Target targetFor(const DeviceInfo &device);

/// Workspace bytes for the configuration the call will choose: exact for the
/// device of the current context (device 0 if none) when a driver is present,
/// otherwise computed for heuristics::Target's defaults (132 SMs). 0 for
/// sizes checkKGroupedSizes rejects.
size_t kGroupedWorkspaceBytes(int64_t m, int64_t n, int numGroups,
                              const int *ksHost);

/// What the kernel that a call with these sizes launches uses: the
/// heuristics' choice with the DGEMM_* overrides, as the call would make it
/// on the current context's device (device 0's primary context if none),
/// loaded from the bundle on first use as a call would.
struct KGroupedKernelInfo {
  std::string entry;
  int threads = 0, gridX = 0;
  /// See LoadedKernel.
  int numRegs = 0, localBytes = 0, staticSmemBytes = 0;
  int spillStoreBytes = -1, spillLoadBytes = -1;
  /// The .meta's smem_bytes: the dynamic shared memory of a launch.
  int dynamicSmemBytes = 0;
  /// The device's peak memory bandwidth (GB/s, 0 unknown) and the
  /// calibration of the heuristics' measured rules it selected.
  int memoryBandwidthGBps = 0;
  std::string calibration;
};

/// Fails with InvalidArgument for sizes checkKGroupedSizes rejects; with the
/// launch's errors for a missing driver, device or kernel.
Status kGroupedKernelInfo(int64_t m, int64_t n, int numGroups,
                          const int *ksHost, bool inPlace,
                          KGroupedKernelInfo &info);

/// Validation only (checkKGroupedArgs and checkKGroupedBuffers, plus the
/// workspace size against the driver-free bound of
/// kGroupedWorkspaceBytesFor(Target{})); never touches the driver.
Status checkKGroupedArguments(const KGroupedArgs &args);

/// The sizes alone, as kGroupedKernelInfo and kGroupedWorkspaceBytes take
/// them: m and n in [1, 2^31 - 1], numGroups >= 1, ksHost not null with
/// every K >= 0 and a multiple of 128, sum(K) <= 2^31 - 1, and
/// numGroups * m * n * 4 (the bytes of d) in 64 bits. InvalidArgument naming
/// the argument ('ks' for ksHost, as kernel_info calls it) and the rule.
Status checkKGroupedSizes(int64_t m, int64_t n, int64_t numGroups,
                          const int32_t *ksHost);

/// One device buffer of a call: its C argument name, address, and the bytes
/// the kernel reads or writes there.
struct DeviceSpan {
  const char *name = "";
  uintptr_t address = 0;
  uint64_t bytes = 0;
  bool written = false;
};

/// The device buffers of arguments that passed checkKGroupedArgs: a, sfa, b,
/// sfb, c, d, ks_device, and the workspace's first `workspaceBytes` bytes
/// (left out when 0 or null). Fails naming the argument if an end address
/// does not fit in 64 bits.
Status deviceSpans(const KGroupedArgs &args, uint64_t workspaceBytes,
                   std::vector<DeviceSpan> &spans);

/// Rules on the buffers of arguments that passed checkKGroupedArgs:
/// sum(ks_host) <= 2^31 - 1 (the total K fits an int32 like each K_g, so
/// the kernel's 32-bit scale-block coordinates never wrap), and no buffer
/// the kernel writes (d, the
/// workspace) overlaps another buffer, except that c may be d exactly.
/// Read-only buffers may share memory. `workspaceBytes` is what the kernel
/// uses of the workspace (0: not known yet, its pairs are skipped).
Status checkKGroupedBuffers(const KGroupedArgs &args, uint64_t workspaceBytes);

/// That every buffer the kernel touches can be addressed from `context`
/// (the stream's) on `device`: a buffer the driver says belongs to another
/// context on the same device, or to a device that cannot reach `device`'s
/// as a peer, is an InvalidArgument naming the argument. Buffers the driver
/// knows no context for (virtual memory management, memory pools, host or
/// managed memory) pass; so does everything when `getAttribute` is null
/// (a driver without cuPointerGetAttribute).
Status checkBufferContexts(PFN_cuPointerGetAttribute_v4000 getAttribute,
                           PFN_cuDeviceCanAccessPeer_v4000 canAccessPeer,
                           CUcontext context, CUdevice device,
                           const KGroupedArgs &args, uint64_t workspaceBytes);

/// "MAJOR.MINOR.PATCH (kernel ABI N)".
const char *runtimeVersion();

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_KGROUPEDGEMM_H
