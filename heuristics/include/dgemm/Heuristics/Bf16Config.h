//===- Bf16Config.h - BF16 kernel configurations ----------------*- C++ -*-===//
//
// The BF16 GEMMs (no scales, FP32 accumulation): one kernel family, built by
// the same builder as the FP8 1D2D kernels with the same row mappings
// (docs/AddingAKernelKind.md, "The BF16 family"), for every kind:
//   - normal: D[M, N] = A B^T (+ D), A [M, K] K-major or [K, M] MN-major, B
//     [N, K] K-major or [K, N] MN-major (DeepGEMM's bf16_gemm_nt/nn/tn/tt),
//     BF16 or FP32 D, FP32 D optionally accumulated in place;
//   - m_grouped_contiguous (+ _psum): A [M_sum, K], B [G, N, K] or [G, K, N]
//     (nt, nn), BF16 D;
//   - m_grouped_masked: A [G, M_max, K], B [G, N, K], BF16 D;
//   - k_grouped_contiguous: A [sum_k, M], B [sum_k, N] (both MN-major), FP32
//     D [G, M, N], optionally accumulated in place.
// A K block is 64 BF16 elements (128 bytes: one 128B-swizzle row), so a
// stage's tiles take as many bytes as the FP8 kernels' 128-deep ones.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_HEURISTICS_BF16CONFIG_H
#define DGEMM_HEURISTICS_BF16CONFIG_H

#include "dgemm/Heuristics/KernelConfig.h"

namespace dgemm {
namespace heuristics {

/// K per block of a BF16 kernel: 64 elements, 128 bytes.
inline constexpr int kBf16BlockK = 64;

/// Rows of K each group of a k-grouped BF16 call is a multiple of: its K
/// blocks must not straddle two groups (one tensor map over all of K).
inline constexpr int kBf16KGroupAlignment = 64;

/// A BF16 call: the kind, the operands' majorness, the output, and the
/// extents. m is M (normal), M_sum (contiguous; psum: M_sum, or G times the
/// expected rows per group where the caller gives a hint), the expected rows
/// per group (masked) or M (k-grouped); k is K, or sum(K_g) (k-grouped).
struct Bf16Problem {
  Kind kind = Kind::Normal;
  Major majorA = Major::K, majorB = Major::K;
  bool dF32 = false, accumulate = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t numGroups = 1;
};

/// "" if the kind takes this layout and output (the rules of
/// checkBf16Config, on the problem's fields) and every extent is in [1,
/// kMaxProblemExtent] (k may be 0 for k-grouped), n * numGroups too; else a
/// message naming the first field and its rule.
std::string checkBf16Problem(const Bf16Problem &problem);

/// The rules of a BF16 kernel (checkConfig's for dtype = bf16): block_m 64
/// or 128 (math_warpgroups = block_m / 64), block_n a multiple of 16 in [16,
/// 256] (a multiple of 64 when B is MN-major: whole 128-byte swizzle
/// columns), block_k 64, stages >= 2 within shared memory, desc_slots 0, no
/// cluster, the register epilogue, quad_b 0, unsafe at most
/// skip_proxy_fence; per kind: major_a MN only for normal and k-grouped,
/// major_b MN only for normal, contiguous, psum and k-grouped, k-grouped
/// both MN; d_f32 for normal (either) and k-grouped (required) only;
/// accumulate only with d_f32.
std::string checkBf16Config(const KernelConfig &config, const Target &target);

/// "dgemm_<kind>_bf16_<layout>_bm<M>_bn<N>_s<S>" plus "_f32" (FP32 d), "_acc"
/// (accumulate) and "_unsafe_nofence"; <kind> is normal, mgrouped,
/// mgrouped_psum, mgrouped_masked or kgrouped; <layout> is DeepGEMM's: nt
/// (both K-major), nn (B MN-major), tn (both MN-major), tt (A MN-major).
std::string bf16EntryName(const KernelConfig &config);

/// "nt", "nn", "tn" or "tt" for (majorA, majorB).
const char *bf16LayoutName(Major majorA, Major majorB);

/// The BF16 kernel of `problem`'s kind, layout and output with `blockM` x
/// `blockN` tiles and the most stages that fit `target`.
KernelConfig makeBf16Config(const Bf16Problem &problem, int blockM, int blockN,
                            const Target &target);

/// Every config selectBf16Config or an override can give for the kind,
/// layout and output of `problem` (its extents unused), in a fixed order
/// without duplicates: block_m 128 then 64, each with block_n 256, 128, 64
/// (those checkBf16Config accepts), the most stages that fit.
std::vector<KernelConfig> candidateBf16Configs(const Bf16Problem &problem,
                                               const Target &target);

/// The candidate with the smallest modelled makespan, waves x (block_m x
/// block_n + kBf16TileOverhead x (block_m + block_n)), waves = ceil(tiles /
/// numSMs) (masked and k-grouped: tiles per group times the groups; the
/// others: the rows once); larger tiles win ties within 1%. A problem
/// checkBf16Problem rejects gets the first candidate.
KernelConfig selectBf16Config(const Bf16Problem &problem, const Target &target);

/// applyMGroupedOverrides' rules for a BF16 config: block_n and block_m
/// where the tile is a candidate (candidateBf16Configs: the bundle holds no
/// other), stages where checkConfig accepts the result; unsafe replaces the
/// field.
void applyBf16Overrides(KernelConfig &config, const ConfigOverrides &overrides,
                        const Target &target);

} // namespace heuristics
} // namespace dgemm

#endif // DGEMM_HEURISTICS_BF16CONFIG_H
