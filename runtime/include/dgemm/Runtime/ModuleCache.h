//===- ModuleCache.h - Loaded kernels, per context --------------*- C++ -*-===//
//
// JIT-compiling a kernel's PTX takes long enough (and the driver's own JIT
// cache, $CUDA_CACHE_PATH, only shortens it) that each kernel is loaded once
// per context and kept until the process exits.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_MODULECACHE_H
#define DGEMM_RUNTIME_MODULECACHE_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/KernelBundle.h"

#include <string>

namespace dgemm {
namespace runtime {

/// A kernel ready to launch: its function has had its dynamic shared memory
/// limit raised to meta.smemBytes.
struct LoadedKernel {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  KernelMeta meta;
  std::string ptxPath;
  /// The JIT's info log (may be empty).
  std::string jitInfoLog;
};

/// Returns the kernel for `config` from the bundle in `dir`, loading it into
/// `context` (which must be current) on first use. Cached per (context,
/// <dir>/<entry>.ptx); the pointer stays valid for the process's life.
/// Thread-safe: concurrent first uses load once.
Status getKernel(const DriverApi &api, CUcontext context,
                 const DeviceInfo &device, const std::string &dir,
                 const heuristics::KernelConfig &config,
                 const LoadedKernel *&kernel);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_MODULECACHE_H
