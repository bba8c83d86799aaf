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
  /// The file the module was loaded from: `<entry>.cubin` where the bundle
  /// has one, else `<entry>.ptx` (JIT-compiled by the driver).
  std::string ptxPath;
  bool fromCubin = false;
  /// The JIT's info log, verbose (may be empty, e.g. when the driver's JIT
  /// cache served the module).
  std::string jitInfoLog;
  /// What the compiled function uses, from cuFuncGetAttribute: registers
  /// per thread at launch (setmaxnreg moves them between the roles after),
  /// local memory per thread (spills and stack), static shared memory.
  int numRegs = 0, localBytes = 0, staticSmemBytes = 0;
  /// Spill bytes per thread from the JIT's log; -1 when it does not say.
  int spillStoreBytes = -1, spillLoadBytes = -1;
};

/// Reads "N bytes spill stores, M bytes spill loads" from a JIT (ptxas)
/// verbose log; leaves both at -1 when the log has no such line.
void parseSpillBytes(const std::string &log, int &storeBytes, int &loadBytes);

/// Returns the kernel for `config` from the bundle in `dir`, loading it into
/// `context` (which must be current) on first use. Loading checks the
/// bundle's index.txt first (loadBundleIndex: the bundle is complete, the
/// kernel is listed, its files match their checksums), then loads the cubin
/// if the index lists one, else JIT-compiles the PTX (refused with
/// ErrorCode::NoDriver when the driver is older than the PTX ISA needs). Cached
/// per (context, <dir>/<entry>.ptx); the pointer stays valid for the process's
/// life. Thread-safe: concurrent first uses load once.
Status getKernel(const DriverApi &api, CUcontext context,
                 const DeviceInfo &device, const std::string &dir,
                 const heuristics::KernelConfig &config,
                 const LoadedKernel *&kernel);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_MODULECACHE_H
