//===- MGroupedConfig.h - M-grouped FP8 kernel configurations ---*- C++ -*-===//
//
// The m-grouped contiguous FP8 GEMM (the MoE forward and data gradient):
// D[M_sum, N] (BF16) = A[M_sum, K] B[g(row)][N, K]^T with 1x128 A scales and
// 128x128 B scales ("1D2D"); row r belongs to expert grouped_layout[r] (-1:
// padding). The rules a configuration of its kernel satisfies and the
// heuristic that picks one (docs/Heuristics.md, docs/Kernel.md).
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_HEURISTICS_MGROUPEDCONFIG_H
#define DGEMM_HEURISTICS_MGROUPEDCONFIG_H

#include "dgemm/Heuristics/KernelConfig.h"

namespace dgemm {
namespace heuristics {

/// Rows per expert segment in the contiguous layout: each expert's rows start
/// at a multiple of this (DeepGEMM's get_mk_alignment_for_contiguous_layout),
/// so that no block_m-row tile mixes experts.
inline constexpr int kMGroupedAlignment = 128;

/// An m-grouped call: M_sum stacked rows, N, K shared by every group.
struct MGroupedProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t numGroups = 0;
};

/// "" if every extent of `problem` is in [1, kMaxProblemExtent] (m, n, k,
/// numGroups) and n * numGroups fits one too (B's rows, one tensor map),
/// else a message naming the first field out of range.
std::string checkMGroupedProblem(const MGroupedProblem &problem);

/// The rules of an m-grouped kernel (checkConfig's for Kind::
/// MGroupedContiguous): block_m 64 or 128 (a divisor of
/// kMGroupedAlignment, one math warpgroup per 64 rows), block_n a multiple
/// of 16 that divides 128 (a tile's columns share one 128-column B scale
/// block), block_k 128, stages >= 2 within shared memory, desc_slots 0 (no
/// descriptor is rewritten), no cluster, the register epilogue, quad_b 0,
/// unsafe at most skip_proxy_fence.
std::string checkMGroupedConfig(const KernelConfig &config,
                                const Target &target);

/// "dgemm_mgrouped_fp8_1d2d_bm<M>_bn<N>_s<S>" plus "_unsafe_nofence".
std::string mGroupedEntryName(const KernelConfig &config);

/// The m-grouped kernel with `blockM` x `blockN` tiles and the most stages
/// that fit `target`.
KernelConfig makeMGroupedConfig(int blockM, int blockN, const Target &target);

/// 128 x 128 tiles, unless 64 columns cut the modelled makespan by more
/// than kTieTolerance (a narrow N, or a tile count just past a wave):
/// the modelled makespan is waves x (block_n + kTileOverheadColumns), waves
/// = ceil(tiles / numSMs). The most stages that fit.
KernelConfig selectMGroupedConfig(const MGroupedProblem &problem,
                                  const Target &target);

/// Every config selectMGroupedConfig or an override can give, in a fixed
/// order without duplicates: block_m 128 then 64, each with block_n 128,
/// 64, 32, 16, with the most stages that fit.
std::vector<KernelConfig> candidateMGroupedConfigs(const Target &target);

/// applyOverrides for an m-grouped config: block_n, block_m (with
/// math_warpgroups = block_m / 64) and stages, each with the most stages
/// that fit and only where checkConfig accepts the result; the k-grouped
/// fields (desc_slots, cluster_m, quad_b, the epilogue) have no m-grouped
/// kernel and are ignored; unsafe replaces the field.
void applyMGroupedOverrides(KernelConfig &config,
                            const ConfigOverrides &overrides,
                            const Target &target);

} // namespace heuristics
} // namespace dgemm

#endif // DGEMM_HEURISTICS_MGROUPEDCONFIG_H
