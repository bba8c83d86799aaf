//===- MGroupedGemm.h - The FP8 1D2D GEMMs (BF16 d) ------------*- C++ -*-===//
//
// D (BF16) = A B^T with 1x128 A scales and 128x128 B scales, one kernel
// family with three row mappings (docs/KernelABI.md, "The 1D2D kernels"):
// m-grouped contiguous (D[M_sum, N], row r of expert grouped_layout[r]),
// m-grouped masked (D[G, M_max, N], rows below masked_m[g]) and normal
// (D[M, N]).
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_MGROUPEDGEMM_H
#define DGEMM_RUNTIME_MGROUPEDGEMM_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Status.h"

#include <cuda.h>

#include <cstdint>

namespace dgemm {
namespace runtime {

/// The arguments of one 1D2D call (device pointers).
struct MGroupedArgs {
  /// The row mapping: MGroupedContiguous, MGroupedContiguousPsum,
  /// MGroupedMasked or Normal.
  heuristics::Kind kind = heuristics::Kind::MGroupedContiguous;
  /// FP8 e4m3 row-major (K-major): [mSum, k] (contiguous: M_sum; normal:
  /// M), or [numGroups, mSum, k] (masked: mSum is M_max).
  const void *a = nullptr;
  /// FP32, per group ceil(k / 128) rows of align(mSum, 4) floats:
  /// sfa[(g * k / 128 + kb) * mPad + row] (DeepGEMM's MN-major TMA-aligned
  /// layout; one group but for masked).
  const void *sfa = nullptr;
  /// FP8 e4m3 [numGroups, n, k] row-major.
  const void *b = nullptr;
  /// FP32 [numGroups, ceil(n / 128), ceil(k / 128)] row-major.
  const void *sfb = nullptr;
  /// BF16 row-major, a's rows by n: written at the rows the mapping selects
  /// only.
  void *d = nullptr;
  /// Contiguous only: int32 [mSum], the expert of each row in [0,
  /// numGroups), or -1 for a padding row; every expert's rows start at a
  /// multiple of 128 (the kernel reads the group of a 128-row tile from its
  /// first row).
  /// Psum: int32 [numGroups], the prefix sums of the experts' rows (expert
  /// g's rows [align(psum[g - 1], 128), psum[g])); read by the kernel only,
  /// clamped into [0, mSum].
  const int32_t *groupedLayout = nullptr;
  /// Masked only: int32 [numGroups] on the device, the rows of each group
  /// to compute; read by the kernel only, clamped into [0, mSum].
  const int32_t *maskedM = nullptr;
  /// Masked: the expected rows per group (the selection's hint), >= 1.
  /// Psum: 0 (none) or the same hint.
  int64_t expectedM = 0;
  int64_t mSum = 0, n = 0, k = 0, numGroups = 0;
};

/// Host-side checks of `args` (no driver needed): the kind, extents,
/// alignment of every pointer, and no overlap of d with any input.
Status checkMGroupedArguments(const MGroupedArgs &args);

/// Enqueues the GEMM of args.kind on `stream` without synchronizing. The
/// runtime allocates nothing on the device and reads no device memory, so
/// the call may be captured into a CUDA graph (the grouped layout and
/// masked_m are read at replay). Thread-safe.
Status mGroupedFp8GemmNt(const MGroupedArgs &args, CUstream stream);

/// The configuration a call with these sizes launches on `target`: the
/// heuristics' choice with the DGEMM_* overrides that apply to the kind.
Status chooseMGroupedConfig(const MGroupedArgs &args,
                            const heuristics::Target &target,
                            heuristics::KernelConfig &config);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_MGROUPEDGEMM_H
