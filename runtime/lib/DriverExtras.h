//===- DriverExtras.h - Driver entry points used when present ---*- C++ -*-===//
//
// Private to the runtime's library. Entry points that DriverApi does not
// require: without them a call still runs, with a weaker cache key or one
// check fewer, so a driver lacking one is not an error.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_LIB_DRIVEREXTRAS_H
#define DGEMM_RUNTIME_LIB_DRIVEREXTRAS_H

#include "dgemm/Runtime/Driver.h"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>

namespace dgemm {
namespace runtime {

struct DriverExtras {
  /// Ids unique for the life of the process (CUDA 12.0): unlike handles they
  /// are never reused by a later context or stream.
  PFN_cuCtxGetId_v12000 cuCtxGetId = nullptr;
  PFN_cuStreamGetId_v12000 cuStreamGetId = nullptr;
  /// For the check that the buffers belong to the stream's context.
  PFN_cuPointerGetAttribute_v4000 cuPointerGetAttribute = nullptr;
  PFN_cuDeviceCanAccessPeer_v4000 cuDeviceCanAccessPeer = nullptr;
};

/// The extras of the library `api` loaded, resolved once per library; all
/// null for a table without one (the tests' fake drivers). Thread-safe.
const DriverExtras &driverExtras(const DriverApi &api);

/// A cache key for `context`: its unique id where the driver gives one,
/// else the handle's value.
uint64_t contextKey(const DriverApi &api, CUcontext context);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_LIB_DRIVEREXTRAS_H
