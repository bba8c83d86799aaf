//===- CApi.cpp - C ABI of the dgemm runtime ------------------------------===//

#include "dgemm/Runtime/dgemm_runtime.h"

#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/KernelBundle.h"

#include <algorithm>
#include <cstring>

using namespace dgemm::runtime;

// The C codes are the ErrorCode values.
static_assert(int(ErrorCode::Ok) == DGEMM_OK);
static_assert(int(ErrorCode::InvalidArgument) == DGEMM_ERROR_INVALID_ARGUMENT);
static_assert(int(ErrorCode::NoDriver) == DGEMM_ERROR_NO_DRIVER);
static_assert(int(ErrorCode::KernelNotFound) == DGEMM_ERROR_KERNEL_NOT_FOUND);
static_assert(int(ErrorCode::BadKernelBundle) == DGEMM_ERROR_BAD_KERNEL_BUNDLE);
static_assert(int(ErrorCode::CudaError) == DGEMM_ERROR_CUDA);
static_assert(int(ErrorCode::UnsupportedDevice) ==
              DGEMM_ERROR_UNSUPPORTED_DEVICE);

namespace {

int report(const Status &status, char *err, uint64_t errLen) {
  if (err && errLen > 0) {
    size_t n = std::min<uint64_t>(status.message().size(), errLen - 1);
    std::memcpy(err, status.message().data(), n);
    err[n] = '\0';
  }
  return static_cast<int>(status.code());
}

KGroupedArgs makeArgs(const void *a, const void *sfa, const void *b,
                      const void *sfb, void *d, const void *c, int64_t m,
                      int64_t n, int32_t numGroups, const int32_t *ksHost,
                      const int32_t *ksDevice, void *workspace,
                      uint64_t workspaceBytes) {
  KGroupedArgs args;
  args.a = a;
  args.sfa = sfa;
  args.b = b;
  args.sfb = sfb;
  args.d = d;
  args.c = c;
  args.m = m;
  args.n = n;
  args.numGroups = numGroups;
  args.ksHost = ksHost;
  args.ksDevice = ksDevice;
  args.workspace = workspace;
  args.workspaceBytes = workspaceBytes;
  return args;
}

} // namespace

extern "C" {

int dgemm_k_grouped_fp8_gemm_nt_contiguous(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const void *c, int64_t m, int64_t n, int32_t num_groups,
    const int32_t *ks_host, const int32_t *ks_device, void *workspace,
    uint64_t workspace_bytes, void *stream, char *err, uint64_t err_len) {
  KGroupedArgs args = makeArgs(a, sfa, b, sfb, d, c, m, n, num_groups, ks_host,
                               ks_device, workspace, workspace_bytes);
  return report(
      kGroupedFp8GemmNtContiguous(args, static_cast<CUstream>(stream)), err,
      err_len);
}

uint64_t dgemm_k_grouped_workspace_bytes(int64_t m, int64_t n,
                                         int32_t num_groups,
                                         const int32_t *ks_host) {
  return kGroupedWorkspaceBytes(m, n, num_groups, ks_host);
}

int dgemm_set_kernel_dir(const char *dir) {
  setKernelDir(dir ? dir : "");
  return DGEMM_OK;
}

const char *dgemm_runtime_version(void) { return runtimeVersion(); }

int dgemm_check_arguments(const void *a, const void *sfa, const void *b,
                          const void *sfb, void *d, const void *c, int64_t m,
                          int64_t n, int32_t num_groups, const int32_t *ks_host,
                          const int32_t *ks_device, void *workspace,
                          uint64_t workspace_bytes, char *err,
                          uint64_t err_len) {
  KGroupedArgs args = makeArgs(a, sfa, b, sfb, d, c, m, n, num_groups, ks_host,
                               ks_device, workspace, workspace_bytes);
  return report(checkKGroupedArguments(args), err, err_len);
}

int dgemm_k_grouped_kernel_info(int64_t m, int64_t n, int32_t num_groups,
                                const int32_t *ks_host, int32_t in_place,
                                dgemm_kernel_info *info, char *err,
                                uint64_t err_len) {
  if (!info)
    return report(Status::error(ErrorCode::InvalidArgument,
                                "argument 'info' must not be null"),
                  err, err_len);
  KGroupedKernelInfo found;
  if (Status s = kGroupedKernelInfo(m, n, num_groups, ks_host, in_place != 0,
                                    found);
      !s.ok())
    return report(s, err, err_len);
  std::memset(info, 0, sizeof(*info));
  size_t len = std::min(found.entry.size(), sizeof(info->entry) - 1);
  std::memcpy(info->entry, found.entry.data(), len);
  info->threads = found.threads;
  info->grid_x = found.gridX;
  info->registers = found.numRegs;
  info->local_bytes = found.localBytes;
  info->spill_store_bytes = found.spillStoreBytes;
  info->spill_load_bytes = found.spillLoadBytes;
  info->static_smem_bytes = found.staticSmemBytes;
  info->dynamic_smem_bytes = found.dynamicSmemBytes;
  info->memory_bandwidth_gbps = found.memoryBandwidthGBps;
  len = std::min(found.calibration.size(), sizeof(info->calibration) - 1);
  std::memcpy(info->calibration, found.calibration.data(), len);
  return report(Status::success(), err, err_len);
}

} // extern "C"
