/*===- dgemm_runtime.h - C ABI of the dgemm runtime ---------------*- C -*-===*\
|*                                                                            *|
|* The stable entry points of libdgemm_runtime.so, for ctypes and other FFI. *|
|* Plain C types only; device pointers and the stream are passed as void*.   *|
|* Functions returning int return 0 on success and a DGEMM_ERROR_* code     *|
|* otherwise, with a NUL-terminated message in err (truncated to err_len).   *|
|* See docs/Runtime.md and docs/KernelABI.md.                                *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef DGEMM_RUNTIME_DGEMM_RUNTIME_H
#define DGEMM_RUNTIME_DGEMM_RUNTIME_H

#include <stdint.h>

#if defined(__GNUC__)
#define DGEMM_RUNTIME_EXPORT __attribute__((visibility("default")))
#else
#define DGEMM_RUNTIME_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes (dgemm::runtime::ErrorCode). */
#define DGEMM_OK 0
#define DGEMM_ERROR_INVALID_ARGUMENT 1
#define DGEMM_ERROR_NO_DRIVER 2
#define DGEMM_ERROR_KERNEL_NOT_FOUND 3
#define DGEMM_ERROR_BAD_KERNEL_BUNDLE 4
#define DGEMM_ERROR_CUDA 5
#define DGEMM_ERROR_UNSUPPORTED_DEVICE 6
/* An unexpected failure inside the runtime (a C++ exception, such as running
 * out of host memory, stopped at the C ABI); the message names the entry
 * point and the cause. No entry point lets an exception escape. */
#define DGEMM_ERROR_INTERNAL 7

/* Enqueues the m-grouped contiguous FP8 GEMM (the MoE forward and data
 * gradient) on `stream` without synchronizing: d[r, :] (BF16) = (a[r, :] *
 * sfa[r, kb]) . (b[g, :, :] * sfb[g, nb, kb])^T summed over 128-deep K blocks
 * kb, for every row r whose expert g = grouped_layout[r] is not -1. a: FP8
 * [m_sum, k]; sfa: FP32, k/128 rows of align(m_sum, 4) floats; b: FP8
 * [num_groups, n, k]; sfb: FP32 [num_groups, ceil(n/128), k/128]; d: BF16
 * [m_sum, n]; grouped_layout: int32 [m_sum], every expert's rows starting at
 * a multiple of 128 (padding rows -1 are neither computed nor written).
 * k % 128 == 0, n % 8 == 0. d must not overlap an input. Allocates nothing:
 * may be captured into a CUDA graph. Thread-safe. */
DGEMM_RUNTIME_EXPORT int dgemm_m_grouped_fp8_gemm_nt_contiguous(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *grouped_layout, int64_t m_sum, int64_t n, int64_t k,
    int32_t num_groups, void *stream, char *err, uint64_t err_len);

/* dgemm_m_grouped_fp8_gemm_nt_contiguous with the experts' rows given by
 * prefix sums instead of one entry per row (DeepGEMM's use_psum_layout):
 * psum: int32 [num_groups] on the device, read by the kernel only; expert g's
 * rows are [align(psum[g - 1], 128), psum[g]) (expert 0's start at row 0),
 * and the rows from psum[g] up to the next multiple of 128 are gaps, neither
 * computed nor written (nor are rows past psum[num_groups - 1]). psum must be
 * ascending with psum[num_groups - 1] <= m_sum; the kernel clamps every value
 * into [0, m_sum], so no value makes it read or write out of bounds.
 * expected_m: 0, or the expected rows per expert (>= 1), which the kernel
 * choice then plans for. Other arguments and rules as the contiguous entry;
 * d must not overlap psum. */
DGEMM_RUNTIME_EXPORT int dgemm_m_grouped_fp8_gemm_nt_contiguous_psum(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *psum, int64_t m_sum, int64_t n, int64_t k,
    int32_t num_groups, int64_t expected_m, void *stream, char *err,
    uint64_t err_len);

/* Enqueues the m-grouped masked FP8 GEMM (the MoE decode step) on `stream`
 * without synchronizing: for every group g and every row r <
 * masked_m[g], d[g, r, :] (BF16) = (a[g, r, :] * sfa[g, r, kb]) . (b[g, :, :]
 * * sfb[g, nb, kb])^T summed over 128-deep K blocks kb. a: FP8 [num_groups,
 * m_max, k]; sfa: FP32, per group k/128 rows of align(m_max, 4) floats (the
 * [num_groups, m_max, k/128] tensor of get_mn_major_tma_aligned_tensor); b:
 * FP8 [num_groups, n, k]; sfb: FP32 [num_groups, ceil(n/128), k/128]; d: BF16
 * [num_groups, m_max, n], rows r >= masked_m[g] neither computed nor
 * written. masked_m: int32 [num_groups] on the device, read by the kernel
 * only (never by the host: it may change between CUDA graph replays); a
 * value outside [0, m_max] is clamped into it. expected_m >= 1: the rows per
 * group the kernel choice plans for. k % 128 == 0, n % 8 == 0, num_groups *
 * m_max <= 2^31 - 1. d must not overlap an input. Allocates nothing: may be
 * captured into a CUDA graph. Thread-safe. */
DGEMM_RUNTIME_EXPORT int dgemm_m_grouped_fp8_gemm_nt_masked(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *masked_m, int64_t m_max, int64_t n, int64_t k,
    int32_t num_groups, int64_t expected_m, void *stream, char *err,
    uint64_t err_len);

/* Enqueues the normal FP8 1D2D GEMM on `stream` without synchronizing:
 * d[r, :] (BF16) = (a[r, :] * sfa[r, kb]) . (b * sfb[nb, kb])^T summed over
 * 128-deep K blocks kb, for every row r < m. a: FP8 [m, k]; sfa: FP32, k/128
 * rows of align(m, 4) floats; b: FP8 [n, k]; sfb: FP32 [ceil(n/128), k/128];
 * d: BF16 [m, n]. k % 128 == 0, n % 8 == 0. d must not overlap an input.
 * Allocates nothing: may be captured into a CUDA graph. Thread-safe. (The
 * 1D1D recipe with an FP32 d is dgemm_k_grouped_fp8_gemm_nt_contiguous with
 * one group of k.) */
DGEMM_RUNTIME_EXPORT int dgemm_fp8_gemm_nt(const void *a, const void *sfa,
                                           const void *b, const void *sfb,
                                           void *d, int64_t m, int64_t n,
                                           int64_t k, void *stream, char *err,
                                           uint64_t err_len);

/* The BF16 GEMMs (no scales, FP32 accumulation; docs/KernelABI.md, "The
 * BF16 kernels"). Each enqueues its kernel on `stream` without
 * synchronizing, allocates nothing and reads no device memory (the int32
 * arrays are read by the kernel), so it may be captured into a CUDA graph;
 * thread-safe. Every argument is checked before the driver is touched
 * (docs/Runtime.md, "The BF16 entries"): extents in [1, 2^31 - 1], n % 8 ==
 * 0, row strides multiples of 8 elements and at least the contiguous
 * extent, a, b, d 16-byte and the int32 arrays 4-byte aligned, d
 * overlapping no input. major_a, major_b: 0 = K-major, 1 = MN-major. */

/* d[m, n] = a . b^T (+ d when accumulate): a [m, k] with row stride lda
 * (major_a 0) or [k, m] with row stride lda (major_a 1); b [n, k] (major_b 0)
 * or [k, n] (major_b 1) with row stride ldb; d row-major [m, n], BF16, or
 * FP32 when d_f32 is 1. accumulate (0 or 1) needs an FP32 d. DeepGEMM's
 * bf16_gemm_nt/nn/tn/tt. */
DGEMM_RUNTIME_EXPORT int
dgemm_bf16_gemm(const void *a, int64_t lda, int32_t major_a, const void *b,
                int64_t ldb, int32_t major_b, void *d, int32_t d_f32,
                int32_t accumulate, int64_t m, int64_t n, int64_t k,
                void *stream, char *err, uint64_t err_len);

/* d[r, :] (BF16) = a[r, :] . b[g]^T for every row r whose expert g =
 * grouped_layout[r] is not -1 (every expert's rows starting at a multiple of
 * 128, as dgemm_m_grouped_fp8_gemm_nt_contiguous). a: [m_sum, k] contiguous;
 * b: [num_groups, n, k] (major_b 0) or [num_groups, k, n] (major_b 1, k %
 * 64 == 0) contiguous; d: [m_sum, n]. DeepGEMM's
 * m_grouped_bf16_gemm_{nt,nn}_contiguous. */
DGEMM_RUNTIME_EXPORT int dgemm_m_grouped_bf16_gemm_contiguous(
    const void *a, const void *b, int32_t major_b, void *d,
    const int32_t *grouped_layout, int64_t m_sum, int64_t n, int64_t k,
    int32_t num_groups, void *stream, char *err, uint64_t err_len);

/* The same with the experts' rows given by prefix sums (psum: int32
 * [num_groups], as dgemm_m_grouped_fp8_gemm_nt_contiguous_psum); expected_m
 * 0 (no hint) or the expected rows per expert. */
DGEMM_RUNTIME_EXPORT int dgemm_m_grouped_bf16_gemm_contiguous_psum(
    const void *a, const void *b, int32_t major_b, void *d, const int32_t *psum,
    int64_t m_sum, int64_t n, int64_t k, int32_t num_groups, int64_t expected_m,
    void *stream, char *err, uint64_t err_len);

/* For every group g and row r < masked_m[g] (clamped into [0, m_max] by the
 * kernel): d[g, r, :] (BF16) = a[g, r, :] . b[g]^T. a: [num_groups, m_max, k],
 * b: [num_groups, n, k], d: [num_groups, m_max, n], all contiguous;
 * masked_m: int32 [num_groups] on the device, never read by the host;
 * expected_m >= 1: the rows per group the kernel choice plans for;
 * num_groups * m_max <= 2^31 - 1. DeepGEMM's m_grouped_bf16_gemm_nt_masked. */
DGEMM_RUNTIME_EXPORT int dgemm_m_grouped_bf16_gemm_nt_masked(
    const void *a, const void *b, void *d, const int32_t *masked_m,
    int64_t m_max, int64_t n, int64_t k, int32_t num_groups, int64_t expected_m,
    void *stream, char *err, uint64_t err_len);

/* d[g] (FP32 [m, n]) = (d[g] if accumulate) + sum over group g's rows k of
 * a[k, :]^T b[k, :]: a [sum_k, m] and b [sum_k, n] contiguous, group g's
 * ks_host[g] rows after the earlier groups'. ks_host: the num_groups K_g on
 * the host, each >= 0 and a multiple of 64, their sum at most 2^31 - 1;
 * ks_device: the same values on the device (int32, read by the kernel). A
 * sum of 0 launches nothing with accumulate and is refused without it.
 * DeepGEMM's k_grouped_bf16_gemm_tn_contiguous. */
DGEMM_RUNTIME_EXPORT int dgemm_k_grouped_bf16_gemm_tn_contiguous(
    const void *a, const void *b, void *d, int32_t accumulate, int64_t m,
    int64_t n, int32_t num_groups, const int32_t *ks_host,
    const int32_t *ks_device, void *stream, char *err, uint64_t err_len);

/* Enqueues d[g] = c[g] + A_g B_g^T (scaled) on `stream` (a CUstream; NULL is
 * the legacy default stream) without synchronizing. `workspace` may be NULL
 * (a runtime-owned buffer is used; not allowed during graph capture);
 * otherwise it must be 128-byte aligned and hold at least
 * dgemm_k_grouped_workspace_bytes() bytes. sum(ks_host) must be at most
 * 2^31 - 1. What the kernel writes (d, the workspace) must not overlap any
 * other buffer, except that c may be d itself; the inputs may share memory.
 * Where the driver can tell, every buffer must be addressable from the
 * stream's context (not another context's memory on the same device). Safe
 * to call from several host threads at once. */
DGEMM_RUNTIME_EXPORT int dgemm_k_grouped_fp8_gemm_nt_contiguous(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const void *c, int64_t m, int64_t n, int32_t num_groups,
    const int32_t *ks_host, const int32_t *ks_device, void *workspace,
    uint64_t workspace_bytes, void *stream, char *err, uint64_t err_len);

/* Workspace bytes for the call with these sizes (exact for the current
 * device when a driver is present); 0 if the sizes are invalid (m or n
 * outside [1, 2^31 - 1], num_groups < 1, ks_host NULL, a K negative or not a
 * multiple of 128, sum(K) > 2^31 - 1, num_groups * m * n * 4 beyond 64 bits)
 * or anything else fails. */
DGEMM_RUNTIME_EXPORT uint64_t dgemm_k_grouped_workspace_bytes(
    int64_t m, int64_t n, int32_t num_groups, const int32_t *ks_host);

/* Sets the kernel bundle directory used when $DGEMM_KERNEL_DIR is unset;
 * NULL or "" clears it. Returns 0 (DGEMM_ERROR_INTERNAL if out of host
 * memory). */
DGEMM_RUNTIME_EXPORT int dgemm_set_kernel_dir(const char *dir);

/* "MAJOR.MINOR.PATCH (kernel ABI N)"; static storage. */
DGEMM_RUNTIME_EXPORT const char *dgemm_runtime_version(void);

/* The argument checks of dgemm_k_grouped_fp8_gemm_nt_contiguous alone
 * (overlaps included, the context check excepted); never touches the driver.
 * The workspace size, and the extent of the workspace in the overlap checks,
 * are taken from the bound for 132 SMs (the H100/H200), as no device is
 * queried. */
DGEMM_RUNTIME_EXPORT int
dgemm_check_arguments(const void *a, const void *sfa, const void *b,
                      const void *sfb, void *d, const void *c, int64_t m,
                      int64_t n, int32_t num_groups, const int32_t *ks_host,
                      const int32_t *ks_device, void *workspace,
                      uint64_t workspace_bytes, char *err, uint64_t err_len);

/* What the kernel a call with these sizes would launch uses (the
 * heuristics' choice with the DGEMM_* overrides, for the current context's
 * device, or device 0's primary context if none), loading it from the kernel
 * bundle on first use as the call would. The counts are per thread. */
typedef struct dgemm_kernel_info {
  char entry[128];          /* the kernel's entry name (its configuration) */
  int32_t threads;          /* per CTA */
  int32_t grid_x;           /* CTAs of the launch */
  int32_t registers;        /* at launch; setmaxnreg then moves them between
                               the producer and the math warpgroups */
  int32_t local_bytes;      /* local memory: spills and stack */
  int32_t spill_store_bytes; /* from the JIT's log; -1 when it gave none */
  int32_t spill_load_bytes;  /* likewise */
  int32_t static_smem_bytes;
  int32_t dynamic_smem_bytes;
  int32_t memory_bandwidth_gbps; /* the device's peak DRAM bandwidth, from its
                                    memory clock and bus width; 0 unknown */
  char calibration[8]; /* "H100" or "H200": whose measurements set the
                          heuristics' rules for this device (docs/Heuristics.md) */
} dgemm_kernel_info;

/* Returns 0 and fills *info, or an error code with a message in err (bad
 * sizes are DGEMM_ERROR_INVALID_ARGUMENT naming the argument). in_place != 0
 * asks for the kernel of a call where c is d. */
DGEMM_RUNTIME_EXPORT int
dgemm_k_grouped_kernel_info(int64_t m, int64_t n, int32_t num_groups,
                            const int32_t *ks_host, int32_t in_place,
                            dgemm_kernel_info *info, char *err,
                            uint64_t err_len);

/* Whether kernels built with an unsafe option (race demonstrations: the
 * .meta key unsafe is not none) may be loaded: 1 allows them, 0 refuses them
 * (the default). Overrides DGEMM_ALLOW_UNSAFE_KERNELS from the first call
 * on; affects kernels loaded afterwards. Returns 0, or
 * DGEMM_ERROR_INVALID_ARGUMENT for any other value of allow. */
DGEMM_RUNTIME_EXPORT int dgemm_set_allow_unsafe_kernels(int32_t allow);

/* Checks a kernel bundle as a kernel load does, for every kernel at once:
 * index.txt is there and of this runtime's format, heuristics version and
 * kernel ABI; every file it lists exists and matches its checksum. dir NULL
 * or "" checks the directory calls would use ($DGEMM_KERNEL_DIR, then
 * dgemm_set_kernel_dir's, then the built-in default). Writes that directory
 * to resolved (NUL-terminated, truncated to resolved_len; may be NULL) and
 * the number of kernels to *kernels (may be NULL), and the number with a
 * cubin to *cubins (may be NULL). Returns 0, DGEMM_ERROR_KERNEL_NOT_FOUND (no
 * directory, no index.txt) or DGEMM_ERROR_BAD_KERNEL_BUNDLE with a message
 * in err. Needs no GPU. */
DGEMM_RUNTIME_EXPORT int
dgemm_check_kernel_bundle(const char *dir, char *resolved,
                          uint64_t resolved_len, int32_t *kernels,
                          int32_t *cubins, char *err, uint64_t err_len);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DGEMM_RUNTIME_DGEMM_RUNTIME_H */
