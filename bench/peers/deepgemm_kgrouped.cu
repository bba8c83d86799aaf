// DeepGEMM's SM90 k-grouped FP8 1D1D kernel as a benchmark peer, behind a C ABI.
//
// bench/bench.py (--deepgemm-peer) loads the shared library built from this file and times
// DeepGEMM's `sm90_fp8_gemm_1d1d_impl<..., GemmType::KGroupedContiguous, float>` on the same
// tensors, in the same process and under the same timer as dgemm's kernel. Nothing of
// DeepGEMM is part of this repository: scripts/build_deepgemm_peer.sh takes its device headers
// (and the CUTLASS/CuTe headers they use) from the `sgl-kernel` wheel on PyPI, which ships
// them for DeepGEMM's run-time compilation, and compiles this file against them with nvcc.
//
// What this file does is what DeepGEMM's host code does for `k_grouped_fp8_gemm_nt_contiguous`
// (DeepGEMM csrc/jit_kernels, as read by us; the rules are restated below, not copied):
//   - the configuration: block_m 128 or 64, block_n from {8, 24, ..., 152} (FP32 output),
//     fewest waves, then the fullest last wave; multicast 2 on B (then A) when m >= 512 and at
//     most 4 groups; the most stages (at most 12 and at most ceil(max_k / 128)) that fit
//     232448 bytes; the SM count lowered to ceil(blocks / waves), rounded to the multicast;
//   - SHAPE_M and SHAPE_N compiled in, K at run time;
//   - the five tensor maps (A and B over the first non-empty group, rewritten by the kernel per
//     group; sfa/sfb over all scale rows; d as [G*M, N] with a 64-row box) and a per-SM buffer
//     of four global descriptor slots.
// A kernel exists only for the configurations instantiated in DGPEER_CONFIGS (the benchmark's
// shapes); any other problem is refused with a message naming the configuration to add.
// The kernel is DeepGEMM's as shipped, whose descriptor update has no drain before a slot is
// rewritten (the race this project's README describes); the drain could only slow it down.

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <deep_gemm/impls/sm90_fp8_gemm_1d1d.cuh>

namespace {

constexpr int kBlockK = 128;
constexpr int kSmemCapacity = 232448;
constexpr int kNumTmaThreads = 128;
constexpr int kDescBytes = 128;

struct PeerConfig {
  int groups, m, n;
  int block_m, block_n, stages;
  int multicast;      // 1 or 2
  bool multicast_on_a;
  int num_sms;
  int smem_bytes;     // dynamic shared memory of the launch
};

int ceilDiv(int a, int b) { return (a + b - 1) / b; }
int alignUp(int a, int b) { return ceilDiv(a, b) * b; }

void say(char* err, size_t len, const char* fmt, ...) {
  if (err == nullptr || len == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
}

// Shared memory as the kernel lays it out: four descriptor slots, the D tile, the stages, two
// barriers per stage.
int kernelSmemBytes(int block_m, int block_n, int stages) {
  const int per_stage = block_m * kBlockK + block_n * kBlockK + block_m * 4 + alignUp(block_n * 4, 128);
  return 4 * kDescBytes + block_m * block_n * 4 + stages * per_stage + stages * 2 * 8;
}

// The budget DeepGEMM's host checks when it picks the stage count (it also counts an extra sfb
// area of the 1D2D kernels, sized by K).
int hostSmemBytes(int block_m, int block_n, int stages, int max_k) {
  const int per_stage = block_m * kBlockK + block_n * kBlockK + block_m * 4 + alignUp(block_n * 4, 128);
  const int uniform = (kBlockK % block_n == 0) ? 1 : 2;
  const int extra_sfb = alignUp(ceilDiv(max_k, kBlockK) * 4 * uniform, 8);
  return block_m * block_n * 4 + stages * per_stage + extra_sfb + stages * 2 * 8 + 4 * kDescBytes;
}

bool chooseConfig(int groups, int m, int n, int max_k, int device_sms, PeerConfig* out,
                  char* err, size_t len) {
  int best_m = 0, best_n = 0, best_waves = 0, best_last = 0;
  for (int bm : {64, 128}) {
    for (int bn = 8; bn <= 152; bn += 16) {
      const int blocks = ceilDiv(m, bm) * ceilDiv(n, bn) * groups;
      const int waves = ceilDiv(blocks, device_sms);
      const int last = blocks % device_sms == 0 ? device_sms : blocks % device_sms;
      bool take = false;
      if (best_m == 0 || waves < best_waves) {
        take = true;
      } else if (waves == best_waves) {
        take = last > best_last;
        if (last == best_last) {
          take |= bm == best_m && bn < best_n;
          take |= bn == best_n && bm < best_m;
          take |= bm != best_m && bn > best_n && bn <= n && bm <= m;
        }
      }
      if (take) {
        best_m = bm, best_n = bn, best_waves = waves, best_last = last;
      }
    }
  }
  PeerConfig c{};
  c.groups = groups, c.m = m, c.n = n;
  c.block_m = best_m, c.block_n = best_n;
  c.multicast = 1, c.multicast_on_a = true;
  if (groups <= 4 && m >= 512 && device_sms % 2 == 0) {
    // B first unless block_m > block_n; both are legal for k-grouped layouts.
    c.multicast = 2;
    c.multicast_on_a = best_m > best_n;
  }
  c.stages = 0;
  for (int s = std::min(12, ceilDiv(max_k, kBlockK)); s > 0; --s) {
    if (hostSmemBytes(best_m, best_n, s, max_k) <= kSmemCapacity) {
      c.stages = s;
      break;
    }
  }
  if (c.stages == 0) {
    say(err, len, "no stage count fits for block %dx%d", best_m, best_n);
    return false;
  }
  c.num_sms = alignUp(ceilDiv(ceilDiv(m, best_m) * ceilDiv(n, best_n) * groups, best_waves), c.multicast);
  c.smem_bytes = kernelSmemBytes(best_m, best_n, c.stages);
  *out = c;
  return true;
}

// --- Tensor maps ------------------------------------------------------------------------------

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFn encodeTiled(char* err, size_t len) {
  static EncodeTiledFn fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q) ==
            cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
      fn = reinterpret_cast<EncodeTiledFn>(p);
  });
  if (fn == nullptr)
    say(err, len, "cuTensorMapEncodeTiled is not available from the driver");
  return fn;
}

bool make2d(CUtensorMap* map, CUtensorMapDataType type, const void* ptr, uint64_t inner,
            uint64_t outer, uint64_t outer_stride_bytes, uint32_t box_inner, uint32_t box_outer,
            CUtensorMapSwizzle swizzle, const char* what, char* err, size_t len) {
  EncodeTiledFn fn = encodeTiled(err, len);
  if (fn == nullptr)
    return false;
  const cuuint64_t dims[2] = {inner, outer};
  const cuuint64_t strides[1] = {outer_stride_bytes};
  const cuuint32_t box[2] = {box_inner, box_outer};
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = fn(map, type, 2, const_cast<void*>(ptr), dims, strides, box, elem,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    say(err, len, "cuTensorMapEncodeTiled(%s) failed with %d (dims %llu x %llu, stride %llu, box %u x %u)",
        what, static_cast<int>(r), static_cast<unsigned long long>(inner),
        static_cast<unsigned long long>(outer), static_cast<unsigned long long>(outer_stride_bytes),
        box_inner, box_outer);
    return false;
  }
  return true;
}

struct Maps {
  CUtensorMap a, b, sfa, sfb, cd;
};

bool makeMaps(const PeerConfig& c, const void* a, const void* sfa, const void* b, const void* sfb,
              void* d, int first_k, int sum_sf_k, Maps* maps, char* err, size_t len) {
  const int m_aligned = alignUp(c.m, 4), n_aligned = alignUp(c.n, 4);
  return make2d(&maps->a, CU_TENSOR_MAP_DATA_TYPE_UINT8, a, first_k, c.m, first_k, kBlockK,
                c.block_m, CU_TENSOR_MAP_SWIZZLE_128B, "a", err, len) &&
         make2d(&maps->b, CU_TENSOR_MAP_DATA_TYPE_UINT8, b, first_k, c.n, first_k, kBlockK,
                c.block_n, CU_TENSOR_MAP_SWIZZLE_128B, "b", err, len) &&
         make2d(&maps->sfa, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, sfa, m_aligned, sum_sf_k,
                static_cast<uint64_t>(m_aligned) * 4, c.block_m, 1, CU_TENSOR_MAP_SWIZZLE_NONE,
                "sfa", err, len) &&
         make2d(&maps->sfb, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, sfb, n_aligned, sum_sf_k,
                static_cast<uint64_t>(n_aligned) * 4, c.block_n, 1, CU_TENSOR_MAP_SWIZZLE_NONE,
                "sfb", err, len) &&
         make2d(&maps->cd, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, d, c.n,
                static_cast<uint64_t>(c.m) * c.groups, static_cast<uint64_t>(c.n) * 4, c.block_n,
                64, CU_TENSOR_MAP_SWIZZLE_NONE, "d", err, len);
}

// --- Instantiations ---------------------------------------------------------------------------

struct LaunchArgs {
  const PeerConfig* cfg;
  void *a, *b;
  int* ks_dev;
  cute::TmaDescriptor* desc_buffer;
  uint32_t m, n, sum_k;
  const Maps* maps;
  cudaStream_t stream;
};

template <int G, int M, int N, int BM, int BN, int S, int MC, bool ON_A, int SMS>
cudaError_t launchOne(const LaunchArgs& x) {
  auto kernel = &deep_gemm::sm90_fp8_gemm_1d1d_impl<
      M, N, 0, G, BM, BN, kBlockK, 128, 128, S, kNumTmaThreads, (BM == 64 ? 128 : 256), MC, ON_A,
      SMS, deep_gemm::GemmType::KGroupedContiguous, float>;
  const int smem = x.cfg->smem_bytes;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e != cudaSuccess)
    return e;
  cudaLaunchConfig_t lc{};
  lc.gridDim = dim3(SMS, 1, 1);
  lc.blockDim = dim3(kNumTmaThreads + (BM == 64 ? 128 : 256), 1, 1);
  lc.dynamicSmemBytes = smem;
  lc.stream = x.stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = MC;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  lc.attrs = attr;
  lc.numAttrs = 1;
  return cudaLaunchKernelEx(&lc, kernel, reinterpret_cast<__nv_fp8_e4m3*>(x.a),
                            reinterpret_cast<__nv_fp8_e4m3*>(x.b), x.ks_dev, x.desc_buffer, x.m,
                            x.n, x.sum_k, x.maps->a, x.maps->b, x.maps->sfa, x.maps->sfb,
                            x.maps->cd);
}

// (groups, m, n, block_m, block_n, stages, multicast, multicast on A, SMs): the configurations
// chooseConfig gives on a 132-SM H200 for bench/bench.py's shapes.
#define DGPEER_CONFIGS(X)                          \
  X(4, 4096, 7168, 128, 152, 4, 2, false, 132)     \
  X(4, 7168, 2048, 128, 152, 4, 2, false, 132)     \
  X(8, 4096, 7168, 128, 152, 4, 1, true, 131)      \
  X(8, 7168, 2048, 128, 152, 4, 1, true, 131)      \
  X(16, 4096, 7168, 128, 152, 4, 1, true, 132)     \
  X(16, 7168, 2048, 128, 152, 4, 1, true, 131)     \
  X(4, 2048, 2048, 128, 152, 2, 2, false, 128)

bool sameConfig(const PeerConfig& c, int g, int m, int n, int bm, int bn, int s, int mc, bool on_a,
                int sms) {
  return c.groups == g && c.m == m && c.n == n && c.block_m == bm && c.block_n == bn &&
         c.stages == s && c.multicast == mc && (mc == 1 || c.multicast_on_a == on_a) &&
         c.num_sms == sms;
}

void describe(const PeerConfig& c, char* out, size_t len) {
  say(out, len,
      "deepgemm 1d1d groups=%d m=%d n=%d block=%dx%d stages=%d multicast=%d%s sms=%d smem=%d",
      c.groups, c.m, c.n, c.block_m, c.block_n, c.stages, c.multicast,
      c.multicast == 1 ? "" : (c.multicast_on_a ? " on A" : " on B"), c.num_sms, c.smem_bytes);
}

bool instantiated(const PeerConfig& c) {
#define DGPEER_MATCH(G, M, N, BM, BN, S, MC, ONA, SMS) \
  if (sameConfig(c, G, M, N, BM, BN, S, MC, ONA, SMS)) \
    return true;
  DGPEER_CONFIGS(DGPEER_MATCH)
#undef DGPEER_MATCH
  return false;
}

bool validate(const int* ks_host, int groups, int m, int n, int* max_k, int* sum_k, int* first_k,
              int* sum_sf_k, char* err, size_t len) {
  if (ks_host == nullptr || groups <= 0) {
    say(err, len, "groups must be positive (got %d) and ks given", groups);
    return false;
  }
  if (m <= 0 || n <= 0 || m % 4 != 0 || n % 4 != 0) {
    say(err, len, "m and n must be positive multiples of 4 (got m=%d, n=%d)", m, n);
    return false;
  }
  *max_k = *sum_k = *first_k = *sum_sf_k = 0;
  for (int i = 0; i < groups; ++i) {
    if (ks_host[i] < 0 || ks_host[i] % kBlockK != 0) {
      say(err, len, "ks[%d] = %d is not a non-negative multiple of 128", i, ks_host[i]);
      return false;
    }
    if (*first_k == 0 && ks_host[i] != 0)
      *first_k = ks_host[i];
    *max_k = std::max(*max_k, ks_host[i]);
    *sum_k += ks_host[i];
    *sum_sf_k += ks_host[i] / kBlockK;
  }
  if (*first_k == 0) {
    say(err, len, "every group is empty");
    return false;
  }
  return true;
}

int deviceSms(char* err, size_t len) {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    say(err, len, "cannot read the device's SM count");
    return 0;
  }
  return sms;
}

}  // namespace

extern "C" {

// Writes the configuration DeepGEMM's rules give for the problem on `sms` SMs (0: the current
// device's count) into `out`. Returns 1 when this library has a kernel for it, 0 when not (out
// says which configuration), -1 on error (out says why). Needs no GPU when sms > 0.
int dgpeer_kgrouped_config(const int* ks_host, int groups, int m, int n, int sms, char* out,
                           size_t len) {
  int max_k, sum_k, first_k, sum_sf_k;
  if (!validate(ks_host, groups, m, n, &max_k, &sum_k, &first_k, &sum_sf_k, out, len))
    return -1;
  if (sms <= 0)
    sms = deviceSms(out, len);
  if (sms == 0)
    return -1;
  PeerConfig c;
  if (!chooseConfig(groups, m, n, max_k, sms, &c, out, len))
    return -1;
  describe(c, out, len);
  return instantiated(c) ? 1 : 0;
}

// d (float32 [groups, m, n], contiguous) += the k-grouped product, as DeepGEMM's
// k_grouped_fp8_gemm_nt_contiguous(a, b, d, ks, ks_tensor, c=d). a/b: the packed per-group
// K-major FP8 operands; sfa/sfb: float32 [sum(ks)/128, m] and [sum(ks)/128, n]; ks_dev: int32
// device copy of ks. Returns 0, or -1 with a message in err.
int dgpeer_kgrouped_run(void* a, const void* sfa, void* b, const void* sfb, float* d,
                        int* ks_dev, const int* ks_host, int groups, int m, int n, void* stream,
                        char* err, size_t len) {
  int max_k, sum_k, first_k, sum_sf_k;
  if (!validate(ks_host, groups, m, n, &max_k, &sum_k, &first_k, &sum_sf_k, err, len))
    return -1;
  if (a == nullptr || b == nullptr || sfa == nullptr || sfb == nullptr || d == nullptr ||
      ks_dev == nullptr) {
    say(err, len, "a null pointer among a, b, sfa, sfb, d, ks_dev");
    return -1;
  }
  const int sms = deviceSms(err, len);
  if (sms == 0)
    return -1;
  PeerConfig c;
  if (!chooseConfig(groups, m, n, max_k, sms, &c, err, len))
    return -1;
  if (!instantiated(c)) {
    char what[256];
    describe(c, what, sizeof what);
    say(err, len, "no kernel instantiated for %s (add it to DGPEER_CONFIGS)", what);
    return -1;
  }
  Maps maps;
  if (!makeMaps(c, a, sfa, b, sfb, d, first_k, sum_sf_k, &maps, err, len))
    return -1;

  // Four 128-byte descriptor slots per CTA, owned by the library (one buffer per process,
  // grown when a launch needs more; the calls are stream-ordered on the caller's stream).
  static void* desc_buffer = nullptr;
  static size_t desc_bytes = 0;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  const size_t need = static_cast<size_t>(c.num_sms) * 4 * kDescBytes;
  if (desc_bytes < need) {
    if (desc_buffer != nullptr)
      cudaFree(desc_buffer);
    desc_buffer = nullptr, desc_bytes = 0;
    if (cudaMalloc(&desc_buffer, need) != cudaSuccess) {
      say(err, len, "cudaMalloc of %zu bytes for the descriptor slots failed", need);
      return -1;
    }
    desc_bytes = need;
  }

  LaunchArgs x{&c, a, b, ks_dev, static_cast<cute::TmaDescriptor*>(desc_buffer),
               static_cast<uint32_t>(m), static_cast<uint32_t>(n), static_cast<uint32_t>(sum_k),
               &maps, static_cast<cudaStream_t>(stream)};
  cudaError_t e = cudaErrorInvalidConfiguration;
#define DGPEER_LAUNCH(G, M, N, BM, BN, S, MC, ONA, SMS) \
  if (sameConfig(c, G, M, N, BM, BN, S, MC, ONA, SMS))  \
    e = launchOne<G, M, N, BM, BN, S, MC, ONA, SMS>(x); \
  else
  DGPEER_CONFIGS(DGPEER_LAUNCH) {}
#undef DGPEER_LAUNCH
  if (e != cudaSuccess) {
    say(err, len, "launch failed: %s", cudaGetErrorString(e));
    return -1;
  }
  return 0;
}

}  // extern "C"
