//===- MGroupedConfig.h - FP8 1D2D kernel configurations --------*- C++ -*-===//
//
// The FP8 GEMMs with 1x128 A scales, 128x128 B scales ("1D2D") and a BF16 D,
// one kernel family with three row mappings (docs/AddingAKernelKind.md):
//   - m_grouped_contiguous (the MoE forward and data gradient): D[M_sum, N] =
//     A[M_sum, K] B[g(row)][N, K]^T, row r belonging to expert
//     grouped_layout[r] (-1: padding);
//   - m_grouped_masked (the MoE decode step): D[g, :masked_m[g], N] =
//     A[g, :masked_m[g], K] B[g][N, K]^T over G blocks of M_max rows;
//   - m_grouped_contiguous_psum: as contiguous, with the experts' rows given
//     by G prefix sums (DeepGEMM's psum layout): expert g's rows are
//     [align(psum[g - 1], 128), psum[g]), the rows between are gaps;
//   - normal: D[M, N] = A[M, K] B[N, K]^T.
// The rules a configuration of the family satisfies and the heuristic that
// picks one (docs/Heuristics.md, docs/Kernel.md).
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

/// Whether `kind` is computed by the 1D2D kernel family of this header:
/// m_grouped_contiguous, m_grouped_masked, m_grouped_contiguous_psum or
/// normal.
bool isOneDTwoDKind(Kind kind);

/// A call of the 1D2D family: N, K shared by every group; m is M_sum
/// (contiguous; psum: M_sum, or G times the expected rows per group aligned
/// to 128 where the caller gives a hint), the expected rows per group (masked:
/// expected_m, the selection's hint; every group has M_max rows of storage) or
/// M (normal, one group).
struct MGroupedProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t numGroups = 0;
  Kind kind = Kind::MGroupedContiguous;
};

/// "" if every extent of `problem` is in [1, kMaxProblemExtent] (m, n, k,
/// numGroups) and n * numGroups fits one too (B's rows, one tensor map),
/// else a message naming the first field out of range (M as the kind's entry
/// point names it: m_sum, m_max or m). The caller checks
/// what is particular to a kind (masked: M_max; normal: one group).
std::string checkMGroupedProblem(const MGroupedProblem &problem);

/// The rules of a 1D2D kernel (checkConfig's for the kinds of
/// isOneDTwoDKind): block_m 64 or 128 (a divisor of
/// kMGroupedAlignment, one math warpgroup per 64 rows), block_n a multiple
/// of 16 that divides 128 (a tile's columns share one 128-column B scale
/// block), block_k 128, stages >= 2 within shared memory, desc_slots 0 (no
/// descriptor is rewritten), no cluster, the register epilogue, quad_b 0,
/// unsafe at most skip_proxy_fence.
std::string checkMGroupedConfig(const KernelConfig &config,
                                const Target &target);

/// "<prefix>_bm<M>_bn<N>_s<S>" plus "_unsafe_nofence", the prefix by kind:
/// dgemm_mgrouped_fp8_1d2d (contiguous), dgemm_mgrouped_masked_fp8_1d2d,
/// dgemm_mgrouped_psum_fp8_1d2d, dgemm_normal_fp8_1d2d.
std::string mGroupedEntryName(const KernelConfig &config);

/// The 1D2D kernel of `kind` with `blockM` x `blockN` tiles and the most
/// stages that fit `target`.
KernelConfig makeMGroupedConfig(int blockM, int blockN, const Target &target,
                                Kind kind = Kind::MGroupedContiguous);

/// The tiles `problem` has with `blockN`-column tiles of 128 rows: per
/// group ceil(m / 128) x ceil(n / blockN), times numGroups for masked (every
/// group its own tiles; m the expected rows), once otherwise (contiguous:
/// the groups share the M_sum rows; normal: one group).
int64_t modelledTiles(const MGroupedProblem &problem, int blockN);

/// A kernel of problem.kind with 128 x 128 tiles, unless 64 columns cut the
/// modelled makespan by more than kTieTolerance (a narrow N, or a tile
/// count just past a wave): the modelled makespan is waves x (block_n +
/// kTileOverheadColumns), waves = ceil(modelledTiles / numSMs). The most
/// stages that fit.
KernelConfig selectMGroupedConfig(const MGroupedProblem &problem,
                                  const Target &target);

/// Every config selectMGroupedConfig or an override can give for `kind`, in
/// a fixed order without duplicates: block_m 128 then 64, each with block_n
/// 128, 64, 32, 16, with the most stages that fit.
std::vector<KernelConfig>
candidateMGroupedConfigs(const Target &target,
                         Kind kind = Kind::MGroupedContiguous);

/// applyOverrides for a 1D2D config (its kind kept): block_n, block_m (with
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
