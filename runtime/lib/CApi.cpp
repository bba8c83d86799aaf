//===- CApi.cpp - C ABI of the dgemm runtime ------------------------------===//

#include "dgemm/Runtime/dgemm_runtime.h"

#include "dgemm/Runtime/Bf16Gemm.h"
#include "dgemm/Runtime/KGroupedGemm.h"
#include "dgemm/Runtime/KernelBundle.h"
#include "dgemm/Runtime/MGroupedGemm.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

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
static_assert(int(ErrorCode::Internal) == DGEMM_ERROR_INTERNAL);

namespace {

/// Copies `message` into err (truncated, NUL-terminated); allocates nothing,
/// so it is safe while out of memory.
void copyMessage(const char *message, size_t length, char *err,
                 uint64_t errLen) noexcept {
  if (err && errLen > 0) {
    size_t n = std::min<uint64_t>(length, errLen - 1);
    std::memcpy(err, message, n);
    err[n] = '\0';
  }
}

int report(const Status &status, char *err, uint64_t errLen) noexcept {
  copyMessage(status.message().data(), status.message().size(), err, errLen);
  return static_cast<int>(status.code());
}

/// Runs `body` (returning a Status) and reports its outcome. An exception
/// must not unwind into a C caller (ctypes aborts the process): it becomes
/// DGEMM_ERROR_INTERNAL with a message naming the entry point, formatted
/// without allocating.
template <typename Body>
int guarded(const char *entry, char *err, uint64_t errLen,
            Body &&body) noexcept {
  const char *what = "unknown exception";
  try {
    return report(body(), err, errLen);
  } catch (const std::bad_alloc &) {
    what = "out of host memory";
  } catch (const std::exception &e) {
    what = e.what();
  } catch (...) {
  }
  char message[512];
  int n = std::snprintf(message, sizeof(message),
                        "%s failed inside the runtime: %s", entry, what);
  copyMessage(message,
              n < 0 ? 0 : std::min<size_t>(size_t(n), sizeof(message) - 1), err,
              errLen);
  return DGEMM_ERROR_INTERNAL;
}

KGroupedArgs makeArgs(const void *a, const void *sfa, const void *b,
                      const void *sfb, void *d, const void *c, int64_t m,
                      int64_t n, int32_t numGroups, const int32_t *ksHost,
                      const int32_t *ksDevice, void *workspace,
                      uint64_t workspaceBytes) {
  return KGroupedArgs{
      a,      sfa,      b,         sfb,           d, c, m, n, numGroups,
      ksHost, ksDevice, workspace, workspaceBytes};
}

/// The arguments the 1D2D entries share; the caller sets the kind and its
/// row-mapping arguments.
MGroupedArgs makeOneDTwoDArgs(const void *a, const void *sfa, const void *b,
                              const void *sfb, void *d, int64_t m, int64_t n,
                              int64_t k, int64_t numGroups) {
  MGroupedArgs args;
  args.a = a;
  args.sfa = sfa;
  args.b = b;
  args.sfb = sfb;
  args.d = d;
  args.mSum = m;
  args.n = n;
  args.k = k;
  args.numGroups = numGroups;
  return args;
}

/// The arguments the BF16 entries share; the caller sets the kind's own.
Bf16Args makeBf16Args(dgemm::heuristics::Kind kind, const void *a,
                      const void *b, void *d, int64_t m, int64_t n, int64_t k,
                      int64_t numGroups) {
  Bf16Args args;
  args.kind = kind;
  args.a = a;
  args.b = b;
  args.d = d;
  args.m = m;
  args.n = n;
  args.k = k;
  args.numGroups = numGroups;
  return args;
}

using dgemm::heuristics::Kind;
using dgemm::heuristics::Major;

} // namespace

extern "C" {

int dgemm_bf16_gemm(const void *a, int64_t lda, int32_t major_a, const void *b,
                    int64_t ldb, int32_t major_b, void *d, int32_t d_f32,
                    int32_t accumulate, int64_t m, int64_t n, int64_t k,
                    void *stream, char *err, uint64_t err_len) {
  return guarded("dgemm_bf16_gemm", err, err_len, [&] {
    Bf16Args args = makeBf16Args(Kind::Normal, a, b, d, m, n, k, 1);
    args.lda = lda;
    args.ldb = ldb;
    args.majorA = Major(major_a);
    args.majorB = Major(major_b);
    args.dF32 = d_f32;
    args.accumulate = accumulate;
    return bf16Gemm(args, static_cast<CUstream>(stream));
  });
}

int dgemm_m_grouped_bf16_gemm_contiguous(const void *a, const void *b,
                                         int32_t major_b, void *d,
                                         const int32_t *grouped_layout,
                                         int64_t m_sum, int64_t n, int64_t k,
                                         int32_t num_groups, void *stream,
                                         char *err, uint64_t err_len) {
  return guarded("dgemm_m_grouped_bf16_gemm_contiguous", err, err_len, [&] {
    Bf16Args args = makeBf16Args(Kind::MGroupedContiguous, a, b, d, m_sum, n, k,
                                 num_groups);
    args.majorB = Major(major_b);
    args.rowArray = grouped_layout;
    return bf16Gemm(args, static_cast<CUstream>(stream));
  });
}

int dgemm_m_grouped_bf16_gemm_contiguous_psum(
    const void *a, const void *b, int32_t major_b, void *d, const int32_t *psum,
    int64_t m_sum, int64_t n, int64_t k, int32_t num_groups, int64_t expected_m,
    void *stream, char *err, uint64_t err_len) {
  return guarded("dgemm_m_grouped_bf16_gemm_contiguous_psum", err, err_len,
                 [&] {
                   Bf16Args args = makeBf16Args(Kind::MGroupedContiguousPsum, a,
                                                b, d, m_sum, n, k, num_groups);
                   args.majorB = Major(major_b);
                   args.rowArray = psum;
                   args.expectedM = expected_m;
                   return bf16Gemm(args, static_cast<CUstream>(stream));
                 });
}

int dgemm_m_grouped_bf16_gemm_nt_masked(const void *a, const void *b, void *d,
                                        const int32_t *masked_m, int64_t m_max,
                                        int64_t n, int64_t k,
                                        int32_t num_groups, int64_t expected_m,
                                        void *stream, char *err,
                                        uint64_t err_len) {
  return guarded("dgemm_m_grouped_bf16_gemm_nt_masked", err, err_len, [&] {
    Bf16Args args =
        makeBf16Args(Kind::MGroupedMasked, a, b, d, m_max, n, k, num_groups);
    args.rowArray = masked_m;
    args.expectedM = expected_m;
    return bf16Gemm(args, static_cast<CUstream>(stream));
  });
}

int dgemm_k_grouped_bf16_gemm_tn_contiguous(
    const void *a, const void *b, void *d, int32_t accumulate, int64_t m,
    int64_t n, int32_t num_groups, const int32_t *ks_host,
    const int32_t *ks_device, void *stream, char *err, uint64_t err_len) {
  return guarded("dgemm_k_grouped_bf16_gemm_tn_contiguous", err, err_len, [&] {
    Bf16Args args =
        makeBf16Args(Kind::KGroupedContiguous, a, b, d, m, n, 0, num_groups);
    args.majorA = Major::MN;
    args.majorB = Major::MN;
    args.dF32 = 1;
    args.accumulate = accumulate;
    args.ksHost = ks_host;
    args.rowArray = ks_device;
    return bf16Gemm(args, static_cast<CUstream>(stream));
  });
}

int dgemm_k_grouped_fp8_gemm_nt_contiguous(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const void *c, int64_t m, int64_t n, int32_t num_groups,
    const int32_t *ks_host, const int32_t *ks_device, void *workspace,
    uint64_t workspace_bytes, void *stream, char *err, uint64_t err_len) {
  return guarded("dgemm_k_grouped_fp8_gemm_nt_contiguous", err, err_len, [&] {
    KGroupedArgs args =
        makeArgs(a, sfa, b, sfb, d, c, m, n, num_groups, ks_host, ks_device,
                 workspace, workspace_bytes);
    return kGroupedFp8GemmNtContiguous(args, static_cast<CUstream>(stream));
  });
}

int dgemm_m_grouped_fp8_gemm_nt_contiguous(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *grouped_layout, int64_t m_sum, int64_t n, int64_t k,
    int32_t num_groups, void *stream, char *err, uint64_t err_len) {
  return guarded("dgemm_m_grouped_fp8_gemm_nt_contiguous", err, err_len, [&] {
    MGroupedArgs args =
        makeOneDTwoDArgs(a, sfa, b, sfb, d, m_sum, n, k, num_groups);
    args.kind = dgemm::heuristics::Kind::MGroupedContiguous;
    args.groupedLayout = grouped_layout;
    return mGroupedFp8GemmNt(args, static_cast<CUstream>(stream));
  });
}

int dgemm_m_grouped_fp8_gemm_nt_contiguous_psum(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *psum, int64_t m_sum, int64_t n, int64_t k,
    int32_t num_groups, int64_t expected_m, void *stream, char *err,
    uint64_t err_len) {
  return guarded(
      "dgemm_m_grouped_fp8_gemm_nt_contiguous_psum", err, err_len, [&] {
        MGroupedArgs args =
            makeOneDTwoDArgs(a, sfa, b, sfb, d, m_sum, n, k, num_groups);
        args.kind = dgemm::heuristics::Kind::MGroupedContiguousPsum;
        args.groupedLayout = psum;
        args.expectedM = expected_m;
        return mGroupedFp8GemmNt(args, static_cast<CUstream>(stream));
      });
}

int dgemm_m_grouped_fp8_gemm_nt_masked(const void *a, const void *sfa,
                                       const void *b, const void *sfb, void *d,
                                       const int32_t *masked_m, int64_t m_max,
                                       int64_t n, int64_t k, int32_t num_groups,
                                       int64_t expected_m, void *stream,
                                       char *err, uint64_t err_len) {
  return guarded("dgemm_m_grouped_fp8_gemm_nt_masked", err, err_len, [&] {
    MGroupedArgs args =
        makeOneDTwoDArgs(a, sfa, b, sfb, d, m_max, n, k, num_groups);
    args.kind = dgemm::heuristics::Kind::MGroupedMasked;
    args.maskedM = masked_m;
    args.expectedM = expected_m;
    return mGroupedFp8GemmNt(args, static_cast<CUstream>(stream));
  });
}

int dgemm_fp8_gemm_nt(const void *a, const void *sfa, const void *b,
                      const void *sfb, void *d, int64_t m, int64_t n, int64_t k,
                      void *stream, char *err, uint64_t err_len) {
  return guarded("dgemm_fp8_gemm_nt", err, err_len, [&] {
    MGroupedArgs args = makeOneDTwoDArgs(a, sfa, b, sfb, d, m, n, k, 1);
    args.kind = dgemm::heuristics::Kind::Normal;
    return mGroupedFp8GemmNt(args, static_cast<CUstream>(stream));
  });
}

uint64_t dgemm_k_grouped_workspace_bytes(int64_t m, int64_t n,
                                         int32_t num_groups,
                                         const int32_t *ks_host) {
  // No status to return: any failure is the documented 0.
  uint64_t bytes = 0;
  guarded("dgemm_k_grouped_workspace_bytes", nullptr, 0, [&] {
    bytes = kGroupedWorkspaceBytes(m, n, num_groups, ks_host);
    return Status::success();
  });
  return bytes;
}

int dgemm_set_kernel_dir(const char *dir) {
  return guarded("dgemm_set_kernel_dir", nullptr, 0, [&] {
    setKernelDir(dir ? dir : "");
    return Status::success();
  });
}

int dgemm_check_kernel_bundle(const char *dir, char *resolved,
                              uint64_t resolvedLen, int32_t *kernels,
                              int32_t *cubins, char *err, uint64_t errLen) {
  return guarded("dgemm_check_kernel_bundle", err, errLen, [&] {
    std::string path = dir ? dir : "";
    if (path.empty())
      if (Status s = resolveKernelDir(path); !s.ok())
        return s;
    copyMessage(path.data(), path.size(), resolved, resolvedLen);
    BundleIndex index;
    if (Status s = checkKernelBundle(path, index); !s.ok())
      return s;
    if (kernels)
      *kernels = int32_t(index.kernels.size());
    if (cubins)
      *cubins = int32_t(std::count_if(
          index.kernels.begin(), index.kernels.end(),
          [](const BundleIndexEntry &k) { return k.cubin.has_value(); }));
    return Status::success();
  });
}

const char *dgemm_runtime_version(void) {
  const char *version = "unknown (kernel ABI unknown)";
  guarded("dgemm_runtime_version", nullptr, 0, [&] {
    version = runtimeVersion();
    return Status::success();
  });
  return version;
}

int dgemm_check_arguments(const void *a, const void *sfa, const void *b,
                          const void *sfb, void *d, const void *c, int64_t m,
                          int64_t n, int32_t num_groups, const int32_t *ks_host,
                          const int32_t *ks_device, void *workspace,
                          uint64_t workspace_bytes, char *err,
                          uint64_t err_len) {
  return guarded("dgemm_check_arguments", err, err_len, [&] {
    KGroupedArgs args =
        makeArgs(a, sfa, b, sfb, d, c, m, n, num_groups, ks_host, ks_device,
                 workspace, workspace_bytes);
    return checkKGroupedArguments(args);
  });
}

int dgemm_k_grouped_kernel_info(int64_t m, int64_t n, int32_t num_groups,
                                const int32_t *ks_host, int32_t in_place,
                                dgemm_kernel_info *info, char *err,
                                uint64_t err_len) {
  return guarded("dgemm_k_grouped_kernel_info", err, err_len, [&] {
    if (!info)
      return Status::error(ErrorCode::InvalidArgument,
                           "argument 'info' must not be null");
    KGroupedKernelInfo found;
    if (Status s =
            kGroupedKernelInfo(m, n, num_groups, ks_host, in_place != 0, found);
        !s.ok())
      return s;
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
    return Status::success();
  });
}

} // extern "C"
