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

#include <string>
#include "dgemm/Runtime/Validation.h"

#include <cuda.h>

#include <cstddef>
#include <cstdint>

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
/// invalid sizes (m, n, numGroups < 1 or ksHost null).
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

/// Fails with InvalidArgument naming the argument for m, n or numGroups < 1,
/// a null ksHost or a K that is negative or not a multiple of 128; with the
/// launch's errors for a missing driver, device or kernel.
Status kGroupedKernelInfo(int64_t m, int64_t n, int numGroups,
                          const int *ksHost, bool inPlace,
                          KGroupedKernelInfo &info);

/// Validation only (checkKGroupedArgs, plus the workspace size against the
/// driver-free bound of kGroupedWorkspaceBytesFor(Target{})); never touches
/// the driver.
Status checkKGroupedArguments(const KGroupedArgs &args);

/// "MAJOR.MINOR.PATCH (kernel ABI N)".
const char *runtimeVersion();

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_KGROUPEDGEMM_H
