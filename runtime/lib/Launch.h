//===- Launch.h - What every kind's launch path shares ---------*- C++ -*-===//
//
// Internal to the runtime: the argument rules the kinds share (pointers,
// overlaps), the configuration's overrides, entering the stream's context
// and checking its device, finding the chosen kernel in the bundle, and
// launching a persistent kernel (KGroupedGemm.cpp, MGroupedGemm.cpp,
// Bf16Gemm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_LIB_LAUNCH_H
#define DGEMM_RUNTIME_LIB_LAUNCH_H

#include "dgemm/Heuristics/KernelConfig.h"
#include "dgemm/Runtime/Context.h"
#include "dgemm/Runtime/Driver.h"
#include "dgemm/Runtime/ModuleCache.h"
#include "dgemm/Runtime/Status.h"
#include "dgemm/Runtime/TensorMaps.h"

#include <cstdint>
#include <functional>
#include <initializer_list>

namespace dgemm {
namespace runtime {

/// A device pointer's rule: not null and `align`-byte aligned. A null name
/// stands for no pointer (the rule is skipped).
struct PointerRule {
  const char *name;
  const void *p;
  uintptr_t align;
};

/// InvalidArgument naming the first pointer that breaks its rule.
Status checkPointers(std::initializer_list<PointerRule> pointers);

/// A buffer's byte range [begin, end), for the overlap checks; an empty one
/// overlaps nothing.
struct Span {
  const char *name;
  uintptr_t begin, end;
};
Span spanOf(const char *name, const void *p, int64_t bytes);

/// InvalidArgument naming the first of `inputs` that `d` overlaps (the
/// kernel writes d while it reads them); the inputs may overlap each other.
Status checkOutputOverlap(const Span &d, std::initializer_list<Span> inputs);

/// The arguments of the row mappings (docs/KernelABI.md): the normal GEMM
/// has one group; masked, `expectedM` in [1, 2^31 - 1] and `numGroups` *
/// `rows` (M_max; the rows of a and d) at most 2^31 - 1; psum, `expectedM` 0
/// (none) or in [1, 2^31 - 1]. No rule for the other kinds. The extents are
/// in [1, 2^31 - 1] already.
Status checkRowMappingArgs(heuristics::Kind kind, int64_t rows,
                           int64_t numGroups, int64_t expectedM);

/// The rows a selection plans for (MGroupedProblem::m, Bf16Problem::m):
/// masked, `expectedM`; psum with a hint (`expectedM` > 0), `numGroups`
/// segments of `expectedM` rows each aligned to kMGroupedAlignment (at most
/// 2^31 - 1); otherwise `rows`.
int64_t plannedRows(heuristics::Kind kind, int64_t rows, int64_t expectedM,
                    int64_t numGroups);

/// The DGEMM_* overrides applied to the heuristics' `config` (those of the
/// 1D2D and BF16 kinds, none of which depends on the problem), then
/// checkConfig on `target`: InvalidArgument for a malformed variable,
/// UnsupportedDevice where the result does not fit the device.
Status applyEnvOverrides(heuristics::KernelConfig &config,
                         const heuristics::Target &target);

/// DGEMM_RASTER_BAND where it is set and well formed, else 0 (row order):
/// the raster band of the 1D2D and BF16 launches.
uint32_t rasterBandOverride();

/// The driver, the context of `stream` made current (docs/Runtime.md) and
/// its device's facts; UnsupportedDevice unless it is an sm_90 device.
Status enterDevice(CUstream stream, const DriverApi *&api,
                   ScopedContext &scope, DeviceInfo &device);

/// The chosen configuration's kernel from the bundle directory, loaded into
/// the scope's context on first use.
Status chosenKernel(const DriverApi &api, const ScopedContext &scope,
                    const DeviceInfo &device,
                    const heuristics::KernelConfig &config,
                    const LoadedKernel *&kernel);

/// Launches `kernel` on a one-dimensional grid of `gridX` CTAs (clusters
/// along x as its metadata says), its block size and dynamic shared memory
/// from the metadata, with the parameter table `params`.
Status launchPersistent(const DriverApi &api, const LoadedKernel &kernel,
                        int64_t gridX, CUstream stream, void **params);

/// What a kernel without c or workspace (the 1D2D and BF16 kernels) takes
/// besides its tensor maps (docs/KernelABI.md, parameters 5-16), and the
/// groups its tile schedule walks.
struct RowMappedLaunch {
  const void *a = nullptr, *b = nullptr;
  void *d = nullptr;
  /// Parameter 9 (the grouped layout, prefix sums, masked_m or K_g; null),
  /// parameter 15 (the FP8 kernels' sfb; null).
  const void *rowArray = nullptr, *sfb = nullptr;
  /// Parameters 11, 12, 13 and 16.
  int64_t m = 0, n = 0, numGroups = 1, k = 0;
  /// G' of the grid's tile count G' * ceil(m / block_m) * ceil(n / block_n).
  int64_t tileGroups = 1;
};

/// Chooses the configuration for the device's target.
using ChooseConfig = std::function<Status(const heuristics::Target &,
                                          heuristics::KernelConfig &)>;
/// Describes the five tensor maps for the chosen configuration.
using DescribeMaps = std::function<void(const heuristics::KernelConfig &,
                                        TensorMapSpec[kNumTensorMaps])>;

/// The launch path of the 1D2D and BF16 kernels: enters the stream's
/// device, chooses the configuration, loads its kernel, encodes the maps,
/// and launches min(tiles, SMs) CTAs with the parameter table of
/// docs/KernelABI.md (c and the workspace null, the raster band
/// rasterBandOverride()).
Status launchRowMapped(const RowMappedLaunch &launch, CUstream stream,
                       const ChooseConfig &choose,
                       const DescribeMaps &describe);

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_LIB_LAUNCH_H
