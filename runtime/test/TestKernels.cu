//===- TestKernels.cu - Device code of the runtime's GPU tests ------------===//
//
// Compiled to PTX (nvcc -ptx -arch=sm_90a) at build time; the tests load it
// through the runtime's driver table.
//
// dgemm_reference_kgrouped: a deliberately simple kernel with the parameter
// list of docs/KernelABI.md. The tests put it into a temporary kernel bundle
// under the entry name the heuristics select, so the runtime's whole launch
// path (bundle lookup, module cache, tensor maps, workspace, cluster and
// shared-memory setup) and the tests' reference checks run on a GPU before
// the compiler produces the real kernels. It reads the scales through the
// sfa/sfb tensor maps (so their encoding is checked) and A/B through the raw
// pointers; it copies the A/B templates into its workspace slot the way the
// real kernel does, so memcheck sees the workspace bounds.
//
// dgemm_test_compare: per-call statistics of the determinism test.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
#include <cuda_fp8.h>

#include <cstdint>

// The tiling the runtime launched with: the test rewrites these initializers
// in the PTX text ("dgemm_ref_block_m = 1111") before loading it.
__constant__ unsigned dgemm_ref_block_m = 1111;
__constant__ unsigned dgemm_ref_block_n = 2222;
__constant__ unsigned dgemm_ref_desc_slots = 3333;

namespace {

__device__ unsigned smemAddress(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ void loadScaleBox(const CUtensorMap *map, float *dst, int x, int y,
                             uint64_t *barrier) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"
               ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               :
               : "r"(smemAddress(dst)), "l"(map), "r"(x), "r"(y),
                 "r"(smemAddress(barrier))
               : "memory");
}

__device__ void waitPhase(uint64_t *barrier, unsigned phase) {
  asm volatile("{\n"
               ".reg .pred done;\n"
               "wait:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra wait;\n"
               "}\n"
               :
               : "r"(smemAddress(barrier)), "r"(phase)
               : "memory");
}

/// Dot product of 128 FP8 e4m3 values at 16-byte aligned addresses.
__device__ float dot128(const uint8_t *x, const uint8_t *y) {
  float sum = 0.f;
  const uint4 *xv = reinterpret_cast<const uint4 *>(x);
  const uint4 *yv = reinterpret_cast<const uint4 *>(y);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    uint4 xs = xv[i], ys = yv[i];
    const unsigned xw[4] = {xs.x, xs.y, xs.z, xs.w};
    const unsigned yw[4] = {ys.x, ys.y, ys.z, ys.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        __nv_fp8x2_storage_t xp = (xw[w] >> (16 * half)) & 0xffff;
        __nv_fp8x2_storage_t yp = (yw[w] >> (16 * half)) & 0xffff;
        float2 xf =
            __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(xp, __NV_E4M3)));
        float2 yf =
            __half22float2(__half2(__nv_cvt_fp8x2_to_halfraw2(yp, __NV_E4M3)));
        sum = fmaf(xf.x, yf.x, sum);
        sum = fmaf(xf.y, yf.y, sum);
      }
    }
  }
  return sum;
}

__device__ unsigned align128(unsigned bytes) {
  return (bytes + 127) / 128 * 128;
}

} // namespace

extern "C" __global__ void
dgemm_reference_kgrouped(const __grid_constant__ CUtensorMap tmA,
                         const __grid_constant__ CUtensorMap tmB,
                         const __grid_constant__ CUtensorMap tmSfa,
                         const __grid_constant__ CUtensorMap tmSfb,
                         const __grid_constant__ CUtensorMap tmD, // unused
                         const uint8_t *a, const uint8_t *b, float *d,
                         const float *c, const int *ks, uint8_t *workspace,
                         unsigned M, unsigned N, unsigned G,
                         unsigned band /* the tile order does not matter here */) {
  (void)band;
  const unsigned bm = dgemm_ref_block_m, bn = dgemm_ref_block_n;
  extern __shared__ __align__(128) uint8_t smem[];
  float *acc = reinterpret_cast<float *>(smem);
  float *sfaBox = reinterpret_cast<float *>(smem + align128(bm * bn * 4));
  float *sfbBox = reinterpret_cast<float *>(
      reinterpret_cast<uint8_t *>(sfaBox) + align128(bm * 4));
  uint64_t *barrier = reinterpret_cast<uint64_t *>(
      reinterpret_cast<uint8_t *>(sfbBox) + align128(bn * 4));

  // What the real kernel does with its first descriptor slot.
  if (threadIdx.x < 16) {
    uint4 *slot = reinterpret_cast<uint4 *>(
        workspace + size_t(blockIdx.x) * dgemm_ref_desc_slots * 256);
    const uint4 *src = threadIdx.x < 8 ? reinterpret_cast<const uint4 *>(&tmA)
                                       : reinterpret_cast<const uint4 *>(&tmB);
    slot[threadIdx.x] = src[threadIdx.x % 8];
  }
  if (threadIdx.x == 0) {
    asm volatile(
        "mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smemAddress(barrier))
        : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  unsigned phase = 0;
  const unsigned tilesM = (M + bm - 1) / bm, tilesN = (N + bn - 1) / bn;
  const unsigned long long tilesPerGroup = (unsigned long long)tilesM * tilesN;
  for (unsigned long long t = blockIdx.x; t < tilesPerGroup * G;
       t += gridDim.x) {
    const unsigned g = unsigned(t / tilesPerGroup);
    const unsigned r = unsigned(t % tilesPerGroup);
    const unsigned m0 = r / tilesN * bm, n0 = r % tilesN * bn;
    long long prefix = 0;
    for (unsigned i = 0; i < g; ++i)
      prefix += ks[i];
    const long long kg = ks[g];
    const uint8_t *aGroup = a + (long long)M * prefix;
    const uint8_t *bGroup = b + (long long)N * prefix;

    for (unsigned i = threadIdx.x; i < bm * bn; i += blockDim.x)
      acc[i] = 0.f;
    for (long long kb = 0; kb < kg / 128; ++kb) {
      if (threadIdx.x == 0) {
        asm volatile(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(
                smemAddress(barrier)),
            "r"((bm + bn) * 4)
            : "memory");
        int scaleRow = int(prefix / 128 + kb);
        loadScaleBox(&tmSfa, sfaBox, int(m0), scaleRow, barrier);
        loadScaleBox(&tmSfb, sfbBox, int(n0), scaleRow, barrier);
      }
      waitPhase(barrier, phase);
      phase ^= 1;
      for (unsigned i = threadIdx.x; i < bm * bn; i += blockDim.x) {
        unsigned mi = i / bn, ni = i % bn;
        unsigned m = m0 + mi, n = n0 + ni;
        if (m < M && n < N) {
          float dot = dot128(aGroup + (long long)m * kg + kb * 128,
                             bGroup + (long long)n * kg + kb * 128);
          acc[i] += dot * sfaBox[mi] * sfbBox[ni];
        }
      }
      __syncthreads(); // The next K block's boxes overwrite sfaBox/sfbBox.
    }
    for (unsigned i = threadIdx.x; i < bm * bn; i += blockDim.x) {
      unsigned m = m0 + i / bn, n = n0 + i % bn;
      if (m < M && n < N) {
        size_t at = ((size_t)g * M + m) * N + n;
        // An empty group copies c: c + 0 would turn -0.0 into +0.0.
        d[at] = kg == 0 ? c[at] : c[at] + acc[i];
      }
    }
    __syncthreads();
  }
}

/// stats[0] (u64): elements of d not bitwise equal to first;
/// stats[1 + g] (f64): sum of squares of group g of d, +inf if any element is
/// not finite. Grid: (any, G).
extern "C" __global__ void dgemm_test_compare(const float *d,
                                              const float *first,
                                              unsigned long long perGroup,
                                              unsigned long long *stats) {
  const unsigned g = blockIdx.y;
  const float *dg = d + g * perGroup;
  const float *fg = first + g * perGroup;
  unsigned long long mismatches = 0;
  double sumsq = 0;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
       i < perGroup; i += (unsigned long long)gridDim.x * blockDim.x) {
    float x = dg[i];
    mismatches += __float_as_uint(x) != __float_as_uint(fg[i]);
    sumsq += isfinite(x) ? double(x) * x
                         : __longlong_as_double(0x7ff0000000000000ll);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    mismatches += __shfl_xor_sync(0xffffffffu, mismatches, offset);
    sumsq += __shfl_xor_sync(0xffffffffu, sumsq, offset);
  }
  if (threadIdx.x % 32 == 0) {
    if (mismatches)
      atomicAdd(stats, mismatches);
    atomicAdd(reinterpret_cast<double *>(stats + 1 + g), sumsq);
  }
}
