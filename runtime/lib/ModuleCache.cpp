//===- ModuleCache.cpp - Loaded kernels, per context ----------------------===//

#include "dgemm/Runtime/ModuleCache.h"

#include "DriverExtras.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

using namespace dgemm::runtime;

namespace {

constexpr size_t kJitLogBytes = 16 * 1024;

std::string cString(const std::string &buffer) {
  return std::string(buffer.c_str());
}

/// Loads a module image (a cubin, or PTX text for the driver's JIT) with
/// the logs captured.
Status loadModule(const DriverApi &api, const std::string &path,
                  const std::string &image, bool isCubin,
                  LoadedKernel &kernel) {
  std::string infoLog(kJitLogBytes, '\0'), errorLog(kJitLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      // ptxas's resource lines (registers, spills) in the info log.
      CU_JIT_LOG_VERBOSE,
      // Compile for the context's device; the PTX's .target (sm_90a) must
      // match it. Only for PTX: a cubin is loaded as it is.
      CU_JIT_TARGET_FROM_CUCONTEXT};
  void *values[] = {infoLog.data(),
                    reinterpret_cast<void *>(kJitLogBytes),
                    errorLog.data(),
                    reinterpret_cast<void *>(kJitLogBytes),
                    reinterpret_cast<void *>(uintptr_t(1)),
                    nullptr};
  unsigned count = sizeof(options) / sizeof(options[0]) - (isCubin ? 1 : 0);
  CUresult result = api.cuModuleLoadDataEx(&kernel.module, image.c_str(), count,
                                           options, values);
  kernel.jitInfoLog = cString(infoLog);
  if (result != CUDA_SUCCESS)
    return Status::error(
        ErrorCode::CudaError,
        "cuModuleLoadDataEx('" + path +
            "') failed: " + describeCuResult(api, result) +
            (isCubin ? "; loader error log: " : "; JIT error log: ") +
            cString(errorLog));
  return Status::success();
}

/// Refuses to JIT-compile PTX whose ISA the driver is too old for, rather
/// than passing on the JIT's CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
Status checkDriverCanJit(const DriverApi &api, const std::string &path,
                         const std::string &ptx) {
  std::string isa = ptxIsaOf(ptx);
  int needed = driverVersionForPtxIsa(isa);
  if (needed == 0 || api.driverVersion == 0 || api.driverVersion >= needed)
    return Status::success();
  auto text = [](int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
  };
  return Status::error(
      ErrorCode::NoDriver,
      "no CUDA driver/device: the CUDA driver supports CUDA " +
          text(api.driverVersion) + ", but '" + path + "' is PTX ISA " + isa +
          ", which only a CUDA " + text(needed) +
          " or newer driver can JIT-compile; update the driver, or use a "
          "bundle with cubins (dgemm-translate assembles them where it "
          "finds ptxas)");
}

Status loadKernel(const DriverApi &api, const DeviceInfo &device,
                  const std::string &dir,
                  const dgemm::heuristics::KernelConfig &config,
                  LoadedKernel &kernel) {
  std::string entry = config.entryName();
  std::string metaPath = dir + "/" + entry + ".meta";
  // The index first: the bundle must be complete and this kernel's files
  // the ones it lists (docs/Runtime.md, Kernel bundle lookup).
  BundleIndex index;
  if (Status s = loadBundleIndex(dir, index); !s.ok())
    return s;
  const BundleIndexEntry *listed = index.find(entry);
  if (!listed)
    return Status::error(
        ErrorCode::KernelNotFound,
        "kernel bundle '" + dir + "' has no kernel '" + entry +
            "' (its index.txt does not list it); build the bundle for every "
            "configuration the heuristics can select: " +
            regenerateCommand(dir));
  std::string metaText;
  if (Status s = readIndexedFile(dir, entry, ".meta", listed->meta, metaText);
      !s.ok())
    return s;
  if (Status s = parseKernelMeta(metaText, metaPath, entry, kernel.meta);
      !s.ok())
    return s;
  if (Status s = checkMetaMatchesConfig(kernel.meta, config, metaPath); !s.ok())
    return s;
  if (kernel.meta.smemBytes > device.maxSmemOptin)
    return Status::error(ErrorCode::BadKernelBundle,
                         metaPath + ": key 'smem_bytes' is " +
                             std::to_string(kernel.meta.smemBytes) +
                             " but the device allows at most " +
                             std::to_string(device.maxSmemOptin));

  // The cubin where the bundle has one (no JIT); the PTX otherwise.
  std::string image;
  kernel.fromCubin = listed->cubin.has_value();
  kernel.ptxPath = dir + "/" + entry + (kernel.fromCubin ? ".cubin" : ".ptx");
  if (Status s = readIndexedFile(
          dir, entry, kernel.fromCubin ? ".cubin" : ".ptx",
          kernel.fromCubin ? *listed->cubin : listed->ptx, image);
      !s.ok())
    return s;
  if (Status s =
          kernel.fromCubin
              ? checkDriverCanLoadCubin(api.driverVersion, index.ptxasRelease,
                                        kernel.ptxPath)
              : checkDriverCanJit(api, kernel.ptxPath, image);
      !s.ok())
    return s;
  if (Status s =
          loadModule(api, kernel.ptxPath, image, kernel.fromCubin, kernel);
      !s.ok())
    return s;
  std::string what =
      "cuModuleGetFunction('" + entry + "') in " + kernel.ptxPath;
  if (Status s = checkCu(api,
                         api.cuModuleGetFunction(&kernel.function,
                                                 kernel.module, entry.c_str()),
                         what.c_str());
      !s.ok())
    return s;
  if (Status s = checkCu(api,
                         api.cuFuncSetAttribute(
                             kernel.function,
                             CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             kernel.meta.smemBytes),
                         "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
      !s.ok())
    return s;
  // What the function uses (reported by dgemm_k_grouped_kernel_info), and
  // the block size its register use allows.
  int maxThreads = 0;
  const struct {
    CUfunction_attribute attribute;
    int *value;
    const char *name;
  } queries[] = {
      {CU_FUNC_ATTRIBUTE_NUM_REGS, &kernel.numRegs, "NUM_REGS"},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &kernel.localBytes,
       "LOCAL_SIZE_BYTES"},
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &kernel.staticSmemBytes,
       "SHARED_SIZE_BYTES"},
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &maxThreads,
       "MAX_THREADS_PER_BLOCK"},
  };
  for (const auto &q : queries) {
    std::string what = std::string("cuFuncGetAttribute(") + q.name + ")";
    if (Status s = checkCu(
            api, api.cuFuncGetAttribute(q.value, q.attribute, kernel.function),
            what.c_str());
        !s.ok())
      return s;
  }
  parseSpillBytes(kernel.jitInfoLog, kernel.spillStoreBytes,
                  kernel.spillLoadBytes);
  // Register use can cap the block size below what the .meta asks for; say
  // so here rather than failing every launch with a bare error code.
  if (kernel.meta.threads > maxThreads)
    return Status::error(ErrorCode::BadKernelBundle,
                         metaPath + ": key 'threads' is " +
                             std::to_string(kernel.meta.threads) +
                             " but the compiled kernel allows at most " +
                             std::to_string(maxThreads) + " per block");
  return Status::success();
}

} // namespace

void dgemm::runtime::parseSpillBytes(const std::string &log, int &storeBytes,
                                     int &loadBytes) {
  storeBytes = loadBytes = -1;
  // "... 0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads"
  static const char kStores[] = " bytes spill stores, ";
  static const char kLoads[] = " bytes spill loads";
  size_t at = log.find(kStores);
  if (at == std::string::npos)
    return;
  size_t start = at;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(log[start - 1])))
    --start;
  size_t loadsAt = log.find(kLoads, at);
  size_t loadsStart = at + sizeof(kStores) - 1;
  if (start == at || loadsAt == std::string::npos || loadsAt == loadsStart)
    return;
  for (size_t i = loadsStart; i < loadsAt; ++i)
    if (!std::isdigit(static_cast<unsigned char>(log[i])))
      return;
  storeBytes = std::atoi(log.substr(start, at - start).c_str());
  loadBytes = std::atoi(log.substr(loadsStart, loadsAt - loadsStart).c_str());
}

Status dgemm::runtime::getKernel(const DriverApi &api, CUcontext context,
                                 const DeviceInfo &device,
                                 const std::string &dir,
                                 const heuristics::KernelConfig &config,
                                 const LoadedKernel *&kernel) {
  // A slot per (context, file), with its own mutex held while its kernel
  // loads: a second thread asking for the same kernel waits for that load
  // instead of compiling it again, while threads asking for other kernels
  // (a JIT compile takes seconds) do not wait. Slots are never erased, so
  // the pointers handed out stay valid for the process's life.
  struct Slot {
    std::mutex loading;
    std::unique_ptr<LoadedKernel> kernel;
  };
  static std::mutex mutex;
  // By context id, not handle: a later context that reuses the handle must
  // not be handed functions of a destroyed module.
  static std::map<std::pair<uint64_t, std::string>, std::unique_ptr<Slot>>
      cache;
  std::string key = dir + "/" + config.entryName() + ".ptx";
  Slot *slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Slot> &entry = cache[{contextKey(api, context), key}];
    if (!entry)
      entry = std::make_unique<Slot>();
    slot = entry.get();
  }
  std::lock_guard<std::mutex> lock(slot->loading);
  if (slot->kernel) {
    kernel = slot->kernel.get();
    return Status::success();
  }
  auto loaded = std::make_unique<LoadedKernel>();
  Status s = loadKernel(api, device, dir, config, *loaded);
  if (!s.ok()) {
    if (loaded->module)
      api.cuModuleUnload(loaded->module);
    return s; // Not kept: a fixed bundle is picked up by the next call.
  }
  slot->kernel = std::move(loaded);
  kernel = slot->kernel.get();
  return Status::success();
}
