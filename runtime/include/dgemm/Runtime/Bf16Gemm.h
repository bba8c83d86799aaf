//===- Bf16Gemm.h - The BF16 GEMMs ------------------------------*- C++ -*-===//
//
// D = A B^T (+ D) on BF16 operands without scales, FP32 accumulation: one
// kernel family with the row mappings of the FP8 1D2D kernels and a
// k-grouped form (docs/KernelABI.md, "The BF16 kernels"):
//   - normal: D[M, N], A K- or MN-major, B K- or MN-major, BF16 or FP32 D,
//     an FP32 D optionally accumulated in place;
//   - m-grouped contiguous (per-row layout or prefix sums): D[M_sum, N], B
//     [G, N, K] K-major or [G, K, N] MN-major, BF16 D;
//   - m-grouped masked: D[G, M_max, N], BF16 D;
//   - k-grouped: D[G, M, N] (FP32) (+)= A_g^T B_g over group g's K_g rows of
//     A [sum_k, M] and B [sum_k, N].
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_BF16GEMM_H
#define DGEMM_RUNTIME_BF16GEMM_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Status.h"
#include "dgemm/Runtime/TensorMaps.h"

#include <cuda.h>

#include <cstdint>

namespace dgemm {
namespace runtime {

/// The arguments of one BF16 call (device pointers; strides in elements).
struct Bf16Args {
  /// Normal, MGroupedContiguous, MGroupedContiguousPsum, MGroupedMasked or
  /// KGroupedContiguous.
  heuristics::Kind kind = heuristics::Kind::Normal;
  /// Which dimension of each operand is contiguous: K (A as [rows, K], B as
  /// [G * N, K]) or M/N (A as [K, M], B as [G * K, N] or [sum_k, N]).
  heuristics::Major majorA = heuristics::Major::K,
                    majorB = heuristics::Major::K;
  /// 1: d is FP32 (else BF16). accumulate 1: the kernel adds its product to
  /// d (c is d). Each 0 or 1.
  int dF32 = 0, accumulate = 0;
  const void *a = nullptr;
  const void *b = nullptr;
  void *d = nullptr;
  /// The normal GEMM only: the row strides of a and b (elements), at least
  /// the contiguous extent. The other kinds take their operands contiguous
  /// and leave these 0.
  int64_t lda = 0, ldb = 0;
  /// The int32 device array the kernel reads (kernel parameter 9): the
  /// grouped layout [m] (contiguous), the prefix sums [numGroups] (psum),
  /// masked_m [numGroups] (masked), the K_g [numGroups] (k-grouped); null
  /// for the normal GEMM.
  const int32_t *rowArray = nullptr;
  /// K-grouped: the K_g on the host, the values of rowArray.
  const int32_t *ksHost = nullptr;
  /// Masked: the expected rows per group (>= 1); psum: 0 (none) or that
  /// hint. The selection plans for it.
  int64_t expectedM = 0;
  /// m: M (normal, k-grouped), M_sum (contiguous) or M_max (masked); k: K
  /// (unused for k-grouped: sum(ksHost)); numGroups 1 for normal.
  int64_t m = 0, n = 0, k = 0, numGroups = 1;
};

/// What valid arguments mean for the maps and the launch.
struct Bf16Shape {
  /// The operands' row strides (elements): args.lda/ldb, or the contiguous
  /// extent for the kinds without strides.
  int64_t lda = 0, ldb = 0;
  /// K, or sum(K_g) (k-grouped).
  int64_t kTotal = 0;
  /// Rows of A K-major (M, M_sum or G * M_max) and of B MN-major (K, G * K
  /// or sum_k); rows of d (M, M_sum, G * M_max or G * M).
  int64_t aRows = 0, bRows = 0, dRows = 0;
  /// Groups the tile schedule walks: G for masked and k-grouped, else 1.
  int64_t tileGroups = 1;
};

/// Host-side checks of `args` (no driver needed), each violation named by
/// the C entry's argument and rule (docs/Runtime.md, "The BF16 entries"):
/// layout and output (heuristics::checkBf16Problem), extents, row strides,
/// the row mapping's rules, the tile count, pointers, and no overlap of d
/// with any input. On success fills `shape` if non-null.
Status checkBf16Arguments(const Bf16Args &args, Bf16Shape *shape = nullptr);

/// The configuration a call launches on `target`: selectBf16Config with the
/// DGEMM_* overrides that apply to it.
Status chooseBf16Config(const Bf16Args &args, const heuristics::Target &target,
                        heuristics::KernelConfig &config);

/// The five maps of docs/KernelABI.md for valid `args` and the chosen
/// `config`: A and B (BF16, SWIZZLE_128B, 64-element box rows), maps 2-4
/// copies of A's.
void describeBf16TensorMaps(const Bf16Args &args, const Bf16Shape &shape,
                            const heuristics::KernelConfig &config,
                            TensorMapSpec specs[kNumTensorMaps]);

/// Enqueues the GEMM of args.kind on `stream` without synchronizing. Reads
/// no device memory and allocates nothing, so it may be captured into a
/// CUDA graph (the row array is read by the kernel at replay). A k-grouped
/// call with sum(K_g) = 0 that accumulates launches nothing (d += 0).
/// Thread-safe.
Status bf16Gemm(const Bf16Args &args, CUstream stream);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_BF16GEMM_H
