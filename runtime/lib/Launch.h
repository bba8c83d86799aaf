//===- Launch.h - What every kind's launch path shares ---------*- C++ -*-===//
//
// Internal to the runtime: entering the stream's context and checking its
// device, finding the chosen kernel in the bundle, and launching a
// persistent kernel (KGroupedGemm.cpp, MGroupedGemm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_LIB_LAUNCH_H
#define DGEMM_RUNTIME_LIB_LAUNCH_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/Driver.h"
#include "dgemm/Runtime/ModuleCache.h"
#include "dgemm/Runtime/Status.h"

namespace dgemm {
namespace runtime {

/// The driver, the context of `stream` made current (docs/Runtime.md) and
/// its device's facts; UnsupportedDevice unless it is an sm_90 device.
Status enterDevice(CUstream stream, const DriverApi *&api,
                   ScopedContext &scope, DeviceInfo &device);

/// The chosen configuration's kernel from the bundle directory, loaded into
/// the scope's context on first use.
Status chosenKernel(const DriverApi &api, const ScopedContext &scope,
                    const DeviceInfo &device,
                    const heuristics::KernelConfig &config,
                    const LoadedKernel *&kernel);

/// Launches `kernel` on a one-dimensional grid of `gridX` CTAs (clusters
/// along x as its metadata says), its block size and dynamic shared memory
/// from the metadata, with the parameter table `params`.
Status launchPersistent(const DriverApi &api, const LoadedKernel &kernel,
                        int64_t gridX, CUstream stream, void **params);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_LIB_LAUNCH_H
