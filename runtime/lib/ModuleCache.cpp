//===- ModuleCache.cpp - Loaded kernels, per context ----------------------===//

#include "dgemm/Runtime/ModuleCache.h"

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

/// Loads `path` (PTX text) with the JIT's logs captured.
Status loadModule(const DriverApi &api, const std::string &path,
                  LoadedKernel &kernel) {
  std::string ptx;
  if (Status s = readFile(path, ptx); !s.ok())
    return Status::error(ErrorCode::KernelNotFound,
                         "kernel bundle file missing: " + s.message());
  std::string infoLog(kJitLogBytes, '\0'), errorLog(kJitLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      // Compile for the context's device; the PTX's .target (sm_90a) must
      // match it.
      CU_JIT_TARGET_FROM_CUCONTEXT};
  void *values[] = {infoLog.data(), reinterpret_cast<void *>(kJitLogBytes),
                    errorLog.data(), reinterpret_cast<void *>(kJitLogBytes),
                    nullptr};
  CUresult result = api.cuModuleLoadDataEx(&kernel.module, ptx.c_str(),
                                           sizeof(options) / sizeof(options[0]),
                                           options, values);
  kernel.jitInfoLog = cString(infoLog);
  if (result != CUDA_SUCCESS)
    return Status::error(ErrorCode::CudaError,
                         "cuModuleLoadDataEx('" + path +
                             "') failed: " + describeCuResult(api, result) +
                             "; JIT error log: " + cString(errorLog));
  return Status::success();
}

Status loadKernel(const DriverApi &api, const DeviceInfo &device,
                  const std::string &dir,
                  const dgemm::heuristics::KernelConfig &config,
                  LoadedKernel &kernel) {
  std::string entry = config.entryName();
  std::string metaPath = dir + "/" + entry + ".meta";
  if (Status s = loadKernelMeta(dir, entry, kernel.meta); !s.ok())
    return s;
  if (Status s = checkMetaMatchesConfig(kernel.meta, config, metaPath); !s.ok())
    return s;
  if (kernel.meta.smemBytes > device.maxSmemOptin)
    return Status::error(ErrorCode::BadKernelBundle,
                         metaPath + ": key 'smem_bytes' is " +
                             std::to_string(kernel.meta.smemBytes) +
                             " but the device allows at most " +
                             std::to_string(device.maxSmemOptin));

  kernel.ptxPath = dir + "/" + entry + ".ptx";
  if (Status s = loadModule(api, kernel.ptxPath, kernel); !s.ok())
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
  // Register use can cap the block size below what the .meta asks for; say
  // so here rather than failing every launch with a bare error code.
  int maxThreads = 0;
  if (Status s =
          checkCu(api,
                  api.cuFuncGetAttribute(
                      &maxThreads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                      kernel.function),
                  "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
      !s.ok())
    return s;
  if (kernel.meta.threads > maxThreads)
    return Status::error(ErrorCode::BadKernelBundle,
                         metaPath + ": key 'threads' is " +
                             std::to_string(kernel.meta.threads) +
                             " but the compiled kernel allows at most " +
                             std::to_string(maxThreads) + " per block");
  return Status::success();
}

} // namespace

Status dgemm::runtime::getKernel(const DriverApi &api, CUcontext context,
                                 const DeviceInfo &device,
                                 const std::string &dir,
                                 const heuristics::KernelConfig &config,
                                 const LoadedKernel *&kernel) {
  static std::mutex mutex;
  static std::map<std::pair<CUcontext, std::string>,
                  std::unique_ptr<LoadedKernel>>
      cache;
  std::string key = dir + "/" + config.entryName() + ".ptx";
  // Held while loading: a second thread asking for the same kernel waits for
  // the first load instead of compiling it again.
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find({context, key});
  if (it != cache.end()) {
    kernel = it->second.get();
    return Status::success();
  }
  auto loaded = std::make_unique<LoadedKernel>();
  Status s = loadKernel(api, device, dir, config, *loaded);
  if (!s.ok()) {
    if (loaded->module)
      api.cuModuleUnload(loaded->module);
    return s; // Not cached: a fixed bundle is picked up by the next call.
  }
  kernel = loaded.get();
  cache.emplace(std::make_pair(context, key), std::move(loaded));
  return Status::success();
}
