//===- MGroupedGemm.h - The m-grouped contiguous FP8 GEMM -------*- C++ -*-===//
//
// D[M_sum, N] (BF16) = A[M_sum, K] B[grouped_layout[row]][N, K]^T with 1x128
// A scales and 128x128 B scales (docs/KernelABI.md, "The m-grouped kernel").
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

/// The arguments of one m-grouped call (device pointers).
struct MGroupedArgs {
  /// FP8 e4m3 [mSum, k] row-major (K-major).
  const void *a = nullptr;
  /// FP32, ceil(k / 128) rows of align(mSum, 4) floats: sfa[kb * mPad + row]
  /// (DeepGEMM's MN-major TMA-aligned layout).
  const void *sfa = nullptr;
  /// FP8 e4m3 [numGroups, n, k] row-major.
  const void *b = nullptr;
  /// FP32 [numGroups, ceil(n / 128), ceil(k / 128)] row-major.
  const void *sfb = nullptr;
  /// BF16 [mSum, n] row-major, written at the rows of an expert only.
  void *d = nullptr;
  /// int32 [mSum]: the expert of each row in [0, numGroups), or -1 for a
  /// padding row; every expert's rows start at a multiple of 128 (the
  /// kernel reads the group of a 128-row tile from its first row).
  const int32_t *groupedLayout = nullptr;
  int64_t mSum = 0, n = 0, k = 0, numGroups = 0;
};

/// Host-side checks of `args` (no driver needed): extents, alignment of
/// every pointer, and no overlap of d with any input.
Status checkMGroupedArguments(const MGroupedArgs &args);

/// Enqueues the GEMM on `stream` without synchronizing. The runtime
/// allocates nothing on the device, so the call may be captured into a CUDA
/// graph (the grouped layout is read at replay). Thread-safe.
Status mGroupedFp8GemmNtContiguous(const MGroupedArgs &args, CUstream stream);

/// The configuration a call with these sizes launches on `target`: the
/// heuristics' choice with the DGEMM_* overrides that apply to the kind.
Status chooseMGroupedConfig(const MGroupedArgs &args,
                            const heuristics::Target &target,
                            heuristics::KernelConfig &config);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_MGROUPEDGEMM_H
