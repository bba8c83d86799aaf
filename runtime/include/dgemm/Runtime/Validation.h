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

/// The heuristics' view of the problem (ks copied from ksHost).
heuristics::KGroupedProblem makeProblem(int64_t m, int64_t n, int numGroups,
                                        const int32_t *ksHost,
                                        bool inPlace = false);

/// Number of output tiles of `config` on an m x n x numGroups output.
int64_t numOutputTiles(int64_t m, int64_t n, int64_t numGroups,
                       const heuristics::KernelConfig &config);

/// Grid x of the launch: min(smCount, config.numSMs, tiles), rounded down to
/// a whole number of clusters but at least one cluster.
int64_t gridSizeFor(int64_t m, int64_t n, int64_t numGroups,
                    const heuristics::KernelConfig &config, int smCount);

/// gridX * desc_slots * 2 * 128 bytes (docs/KernelABI.md).
uint64_t workspaceBytesFor(int64_t gridX, int descSlots);

/// The workspace the call would need on `target` (its numSMs standing for the
/// device's multiprocessor count); 0 if the arguments are invalid.
/// The configuration the runtime launches: the heuristics' choice, with
/// `desc_slots` overridden by the environment variable DGEMM_DESC_SLOTS (1 or
/// 2) when set. One descriptor slot is DeepGEMM's scheme, where every group
/// switch drains the previous group's loads; it exists to compare the two
/// and to demonstrate the race with the guard-less test bundle.
///
/// `inPlace` (c is d) lets the heuristics choose the reduction epilogue or
/// the in-place kernel; DGEMM_RED_MAX_BLOCKS (an integer >= 0) replaces
/// red_max_blocks in place and clears in_place_only (0: the register
/// epilogue), then DGEMM_IN_PLACE_ONLY ("0" or "1") sets in_place_only (1
/// clears red_max_blocks); both are ignored for calls that are not in place,
/// which never take those kernels. DGEMM_PARK ("0" or "1", in place only)
/// clears park, or sets it where the in-place kernel can park its tiles
/// (heuristics::parkFits); a change of park, or of the epilogue, resets the
/// stages to the most that fit, DGEMM_STAGES applying again. DGEMM_BLOCK_N
/// and DGEMM_BLOCK_M clear park when the forced tile cannot park.
/// Quad-ordered B (quad_b) is decided last,
/// by heuristics::quadBFits on the resulting kernel; DGEMM_QUAD_B=0 turns it
/// off.
heuristics::KernelConfig chooseKGroupedConfig(int64_t m, int64_t n,
                                              int numGroups,
                                              const int32_t *ksHost,
                                              const heuristics::Target &target,
                                              bool inPlace = false);

/// The raster band (m-blocks; docs/KernelABI.md parameter 14) the runtime
/// launches with: heuristics::selectRasterBand, or the environment variable
/// DGEMM_RASTER_BAND when it holds an integer from 0 to 65536 (anything else
/// is ignored). The band only orders the tiles: every band gives the same
/// output bit for bit.
uint32_t chooseRasterBand(int64_t m, int64_t n, int numGroups,
                          const int32_t *ksHost);

uint64_t kGroupedWorkspaceBytesFor(int64_t m, int64_t n, int numGroups,
                                   const int32_t *ksHost,
                                   const heuristics::Target &target);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_VALIDATION_H
