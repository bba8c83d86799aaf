/* A stand-in for libdgemm_runtime.so with the same C ABI
 * (runtime/include/dgemm/Runtime/dgemm_runtime.h). It launches nothing: it
 * records the arguments of the last call so the tests can check what the
 * ctypes binding passes. Built by the tests with the host C compiler. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define STUB_MAX_GROUPS 64

struct StubCall {
  const void *ptrs[6]; /* a, sfa, b, sfb, d, c */
  int64_t m, n;
  int32_t num_groups;
  int32_t ks[STUB_MAX_GROUPS];
  const void *ks_device;
  void *workspace;
  uint64_t workspace_bytes;
  void *stream;
  uint64_t err_len;
  int64_t calls;
};

static struct StubCall last;
static char kernel_dir[4096];
static int fail_code;

int dgemm_k_grouped_fp8_gemm_nt_contiguous(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const void *c, int64_t m, int64_t n, int32_t num_groups,
    const int32_t *ks_host, const int32_t *ks_device, void *workspace,
    uint64_t workspace_bytes, void *stream, char *err, uint64_t err_len) {
  last.ptrs[0] = a;
  last.ptrs[1] = sfa;
  last.ptrs[2] = b;
  last.ptrs[3] = sfb;
  last.ptrs[4] = d;
  last.ptrs[5] = c;
  last.m = m;
  last.n = n;
  last.num_groups = num_groups;
  for (int32_t i = 0; i < num_groups && i < STUB_MAX_GROUPS; ++i)
    last.ks[i] = ks_host[i];
  last.ks_device = ks_device;
  last.workspace = workspace;
  last.workspace_bytes = workspace_bytes;
  last.stream = stream;
  last.err_len = err_len;
  last.calls += 1;
  if (fail_code != 0) {
    snprintf(err, err_len, "stub failure %d", fail_code);
    return fail_code;
  }
  return 0;
}

struct StubMCall {
  const void *ptrs[6]; /* a, sfa, b, sfb, d, grouped_layout or masked_m */
  int64_t m_sum, n, k; /* m_sum: M_sum, M_max (masked) or M (normal) */
  int32_t num_groups;
  void *stream;
  uint64_t err_len;
  int64_t calls;
  int64_t expected_m; /* masked only; -1 otherwise */
  int32_t entry;      /* 0: contiguous, 1: masked, 2: normal, 3: psum */
};

static struct StubMCall last_m;

/* Records a call of one of the 1D2D entries. */
static int record_m(int32_t entry, const void *a, const void *sfa,
                    const void *b, const void *sfb, void *d,
                    const int32_t *rows, int64_t m, int64_t n, int64_t k,
                    int32_t num_groups, int64_t expected_m, void *stream,
                    char *err, uint64_t err_len) {
  const void *ptrs[6] = {a, sfa, b, sfb, d, rows};
  memcpy(last_m.ptrs, ptrs, sizeof(ptrs));
  last_m.m_sum = m;
  last_m.n = n;
  last_m.k = k;
  last_m.num_groups = num_groups;
  last_m.stream = stream;
  last_m.err_len = err_len;
  last_m.expected_m = expected_m;
  last_m.entry = entry;
  last_m.calls += 1;
  if (fail_code != 0) {
    snprintf(err, err_len, "stub failure %d", fail_code);
    return fail_code;
  }
  return 0;
}

int dgemm_m_grouped_fp8_gemm_nt_contiguous(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *grouped_layout, int64_t m_sum, int64_t n, int64_t k,
    int32_t num_groups, void *stream, char *err, uint64_t err_len) {
  return record_m(0, a, sfa, b, sfb, d, grouped_layout, m_sum, n, k,
                  num_groups, -1, stream, err, err_len);
}

int dgemm_m_grouped_fp8_gemm_nt_contiguous_psum(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *psum, int64_t m_sum, int64_t n, int64_t k,
    int32_t num_groups, int64_t expected_m, void *stream, char *err,
    uint64_t err_len) {
  return record_m(3, a, sfa, b, sfb, d, psum, m_sum, n, k, num_groups,
                  expected_m, stream, err, err_len);
}

int dgemm_m_grouped_fp8_gemm_nt_masked(
    const void *a, const void *sfa, const void *b, const void *sfb, void *d,
    const int32_t *masked_m, int64_t m_max, int64_t n, int64_t k,
    int32_t num_groups, int64_t expected_m, void *stream, char *err,
    uint64_t err_len) {
  return record_m(1, a, sfa, b, sfb, d, masked_m, m_max, n, k, num_groups,
                  expected_m, stream, err, err_len);
}

int dgemm_fp8_gemm_nt(const void *a, const void *sfa, const void *b,
                      const void *sfb, void *d, int64_t m, int64_t n,
                      int64_t k, void *stream, char *err, uint64_t err_len) {
  return record_m(2, a, sfa, b, sfb, d, NULL, m, n, k, 1, -1, stream, err,
                  err_len);
}

struct StubBf16Call {
  const void *ptrs[4]; /* a, b, d, the int32 array (layout, psum, masked_m,
                          ks_device) */
  int64_t lda, ldb;    /* normal only; 0 otherwise */
  int32_t major_a, major_b, d_f32, accumulate;
  int64_t m, n, k; /* m: M, M_sum, M_max; k: 0 for k-grouped */
  int32_t num_groups;
  int64_t expected_m; /* psum and masked; -1 otherwise */
  int32_t ks[STUB_MAX_GROUPS];
  void *stream;
  int64_t calls;
  int32_t entry; /* 0 normal, 1 contiguous, 2 psum, 3 masked, 4 k-grouped */
};

static struct StubBf16Call last_bf16;

/* Records a call of one of the BF16 entries (the caller set the fields of
 * its own). */
static int record_bf16(int32_t entry, const void *a, const void *b, void *d,
                       const void *array, int64_t m, int64_t n, int64_t k,
                       int32_t num_groups, void *stream, char *err,
                       uint64_t err_len) {
  const void *ptrs[4] = {a, b, d, array};
  memcpy(last_bf16.ptrs, ptrs, sizeof(ptrs));
  last_bf16.m = m;
  last_bf16.n = n;
  last_bf16.k = k;
  last_bf16.num_groups = num_groups;
  last_bf16.stream = stream;
  last_bf16.entry = entry;
  last_bf16.calls += 1;
  if (fail_code != 0) {
    snprintf(err, err_len, "stub failure %d", fail_code);
    return fail_code;
  }
  return 0;
}

static void reset_bf16(void) {
  last_bf16.lda = last_bf16.ldb = 0;
  last_bf16.major_a = last_bf16.major_b = 0;
  last_bf16.d_f32 = last_bf16.accumulate = 0;
  last_bf16.expected_m = -1;
}

int dgemm_bf16_gemm(const void *a, int64_t lda, int32_t major_a, const void *b,
                    int64_t ldb, int32_t major_b, void *d, int32_t d_f32,
                    int32_t accumulate, int64_t m, int64_t n, int64_t k,
                    void *stream, char *err, uint64_t err_len) {
  reset_bf16();
  last_bf16.lda = lda;
  last_bf16.ldb = ldb;
  last_bf16.major_a = major_a;
  last_bf16.major_b = major_b;
  last_bf16.d_f32 = d_f32;
  last_bf16.accumulate = accumulate;
  return record_bf16(0, a, b, d, NULL, m, n, k, 1, stream, err, err_len);
}

int dgemm_m_grouped_bf16_gemm_contiguous(const void *a, const void *b,
                                         int32_t major_b, void *d,
                                         const int32_t *grouped_layout,
                                         int64_t m_sum, int64_t n, int64_t k,
                                         int32_t num_groups, void *stream,
                                         char *err, uint64_t err_len) {
  reset_bf16();
  last_bf16.major_b = major_b;
  return record_bf16(1, a, b, d, grouped_layout, m_sum, n, k, num_groups,
                     stream, err, err_len);
}

int dgemm_m_grouped_bf16_gemm_contiguous_psum(
    const void *a, const void *b, int32_t major_b, void *d, const int32_t *psum,
    int64_t m_sum, int64_t n, int64_t k, int32_t num_groups, int64_t expected_m,
    void *stream, char *err, uint64_t err_len) {
  reset_bf16();
  last_bf16.major_b = major_b;
  last_bf16.expected_m = expected_m;
  return record_bf16(2, a, b, d, psum, m_sum, n, k, num_groups, stream, err,
                     err_len);
}

int dgemm_m_grouped_bf16_gemm_nt_masked(const void *a, const void *b, void *d,
                                        const int32_t *masked_m, int64_t m_max,
                                        int64_t n, int64_t k,
                                        int32_t num_groups, int64_t expected_m,
                                        void *stream, char *err,
                                        uint64_t err_len) {
  reset_bf16();
  last_bf16.expected_m = expected_m;
  return record_bf16(3, a, b, d, masked_m, m_max, n, k, num_groups, stream,
                     err, err_len);
}

int dgemm_k_grouped_bf16_gemm_tn_contiguous(
    const void *a, const void *b, void *d, int32_t accumulate, int64_t m,
    int64_t n, int32_t num_groups, const int32_t *ks_host,
    const int32_t *ks_device, void *stream, char *err, uint64_t err_len) {
  reset_bf16();
  last_bf16.major_a = last_bf16.major_b = 1;
  last_bf16.d_f32 = 1;
  last_bf16.accumulate = accumulate;
  for (int32_t i = 0; i < num_groups && i < STUB_MAX_GROUPS; ++i)
    last_bf16.ks[i] = ks_host[i];
  return record_bf16(4, a, b, d, ks_device, m, n, 0, num_groups, stream, err,
                     err_len);
}

/* A value the tests can predict from the arguments. */
uint64_t dgemm_k_grouped_workspace_bytes(int64_t m, int64_t n,
                                         int32_t num_groups,
                                         const int32_t *ks_host) {
  uint64_t sum = 0;
  for (int32_t i = 0; i < num_groups; ++i)
    sum += (uint64_t)ks_host[i];
  return 128u * (uint64_t)(m + n + num_groups) + sum;
}

/* Like the runtime, "" or NULL clears the directory. Unlike it, "<fail>"
 * returns 1, to exercise the binding's failure path. */
int dgemm_set_kernel_dir(const char *dir) {
  if (dir != NULL && strcmp(dir, "<fail>") == 0)
    return 1;
  snprintf(kernel_dir, sizeof(kernel_dir), "%s", dir ? dir : "");
  return 0;
}

const char *dgemm_runtime_version(void) { return "stub-1"; }

/* Like the runtime: 0 or 1, else DGEMM_ERROR_INVALID_ARGUMENT (1). -1 until
 * called. */
static int allow_unsafe = -1;

int dgemm_set_allow_unsafe_kernels(int32_t allow) {
  if (allow != 0 && allow != 1)
    return 1;
  allow_unsafe = allow;
  return 0;
}

int stub_allow_unsafe(void) { return allow_unsafe; }

/* Mirrors dgemm_kernel_info; fills it from the arguments so the tests can
 * check the binding's field order, and fails like the runtime on m < 1. */
typedef struct {
  char entry[128];
  int32_t threads, grid_x, registers, local_bytes, spill_store_bytes,
      spill_load_bytes, static_smem_bytes, dynamic_smem_bytes,
      memory_bandwidth_gbps;
  char calibration[8];
} stub_kernel_info;

int dgemm_k_grouped_kernel_info(int64_t m, int64_t n, int32_t num_groups,
                                const int32_t *ks_host, int32_t in_place,
                                stub_kernel_info *info, char *err,
                                uint64_t err_len) {
  if (m < 1) {
    snprintf(err, err_len, "argument 'm' must be >= 1, got %lld",
             (long long)m);
    return 1;
  }
  snprintf(info->entry, sizeof(info->entry), "stub_m%lld_n%lld_g%d_ip%d",
           (long long)m, (long long)n, (int)num_groups, (int)in_place);
  info->threads = 384;
  info->grid_x = num_groups;
  info->registers = 168;
  info->local_bytes = 0;
  info->spill_store_bytes = -1;
  info->spill_load_bytes = ks_host[0];
  info->static_smem_bytes = 7;
  info->dynamic_smem_bytes = (int32_t)n;
  info->memory_bandwidth_gbps = (int32_t)m;
  snprintf(info->calibration, sizeof(info->calibration), "%s",
           in_place ? "H200" : "H100");
  return 0;
}

const struct StubCall *stub_last_call(void) { return &last; }
const struct StubMCall *stub_last_m_call(void) { return &last_m; }
const struct StubBf16Call *stub_last_bf16_call(void) { return &last_bf16; }
const char *stub_kernel_dir(void) { return kernel_dir; }
void stub_set_fail(int code) { fail_code = code; }
