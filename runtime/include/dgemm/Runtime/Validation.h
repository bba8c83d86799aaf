//===- Validation.h - Argument checks of the k-grouped GEMM -----*- C++ -*-===//
//
// Everything the runtime can check about a call without the driver, so that
// bad arguments fail with a message naming the argument instead of a fault
// inside the kernel, and so that CPU-only CI can test the rules.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_VALIDATION_H
#define DGEMM_RUNTIME_VALIDATION_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Status.h"

#include <cstddef>
#include <cstdint>

namespace dgemm {
namespace runtime {

/// The arguments of k_grouped_fp8_gemm_nt_contiguous (docs/KernelABI.md).
struct KGroupedArgs {
  const void *a = nullptr;
  const void *sfa = nullptr;
  const void *b = nullptr;
  const void *sfb = nullptr;
  void *d = nullptr;
  const void *c = nullptr;
  int64_t m = 0, n = 0;
  int64_t numGroups = 0;
  const int32_t *ksHost = nullptr;
  const int32_t *ksDevice = nullptr;
  /// May be null: the runtime then uses a buffer of its own.
  void *workspace = nullptr;
  uint64_t workspaceBytes = 0;
};

/// Facts derived from valid arguments.
struct KGroupedShape {
  int64_t sumK = 0;
  /// sum(K) / 128, but at least 1: the scale tensor maps need a dimension
  /// >= 1 even when every group is empty.
  int64_t scaleBlocks = 1;
};

/// Required alignments (bytes).
inline constexpr uint64_t kOperandAlignment = 16;    // TMA global addresses
inline constexpr uint64_t kWorkspaceAlignment = 128; // docs/KernelABI.md

/// Checks every rule that needs no driver, in a fixed order, and returns the
/// first violation (ErrorCode::InvalidArgument, message naming the argument
/// and the rule). Does not check the workspace size, which depends on the
/// device; see checkWorkspaceSize. On success fills `shape` if non-null.
Status checkKGroupedArgs(const KGroupedArgs &args,
                         KGroupedShape *shape = nullptr);

/// Fails if a workspace is given and is smaller than `requiredBytes`.
Status checkWorkspaceSize(const KGroupedArgs &args, uint64_t requiredBytes);

/// The heuristics' view of the problem (ks copied from ksHost, left empty
/// when ksHost is null or numGroups < 1).
heuristics::KGroupedProblem makeProblem(int64_t m, int64_t n, int numGroups,
                                        const int32_t *ksHost,
                                        bool inPlace = false);

/// Number of output tiles of `config` on an m x n x numGroups output; 0 for
/// an empty output or a tile below 1 x 1, INT64_MAX where the count does not
/// fit.
int64_t numOutputTiles(int64_t m, int64_t n, int64_t numGroups,
                       const heuristics::KernelConfig &config);

/// Grid x of the launch: min(smCount, config.numSMs, tiles), rounded down to
/// a whole number of clusters but at least one cluster.
int64_t gridSizeFor(int64_t m, int64_t n, int64_t numGroups,
                    const heuristics::KernelConfig &config, int smCount);

/// gridX * desc_slots * 2 * 128 bytes (docs/KernelABI.md).
uint64_t workspaceBytesFor(int64_t gridX, int descSlots);

/// The configuration the runtime launches: heuristics::selectKGroupedConfig
/// for the problem (`inPlace`: c is d, which lets the heuristics choose the
/// reduction epilogue or an in-place kernel), then the DGEMM_* environment
/// overrides (envOverrides, docs/Runtime.md) through
/// heuristics::applyOverrides. Fails (ErrorCode::InvalidArgument) where a
/// DGEMM_* variable is malformed, naming the variable and its rule.
Status chooseKGroupedConfig(int64_t m, int64_t n, int numGroups,
                            const int32_t *ksHost,
                            const heuristics::Target &target, bool inPlace,
                            heuristics::KernelConfig &config);

/// The same for callers without a Status (bench/bench.py calls it through
/// ctypes by its mangled name): the configuration, or one with blockM = 0,
/// which heuristics::checkConfig rejects, where the other form fails.
heuristics::KernelConfig
chooseKGroupedConfig(int64_t m, int64_t n, int numGroups, const int32_t *ksHost,
                     const heuristics::Target &target, bool inPlace = false);

/// The raster band (m-blocks; docs/KernelABI.md parameter 14) the runtime
/// launches with: heuristics::selectRasterBand, or DGEMM_RASTER_BAND (an
/// integer from 0 to 65536) when set; a malformed value is
/// chooseKGroupedConfig's error. The band only orders the tiles: every band
/// gives the same output bit for bit.
uint32_t chooseRasterBand(int64_t m, int64_t n, int numGroups,
                          const int32_t *ksHost);

/// The workspace the call would need on `target` (its numSMs standing for the
/// device's multiprocessor count); 0 if the arguments are invalid or
/// chooseKGroupedConfig fails.
uint64_t kGroupedWorkspaceBytesFor(int64_t m, int64_t n, int numGroups,
                                   const int32_t *ksHost,
                                   const heuristics::Target &target);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_VALIDATION_H
