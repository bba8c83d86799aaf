//===- Overrides.h - The DGEMM_* environment overrides ----------*- C++ -*-===//
//
// Experiment overrides of the kernel configuration and the unsafe-kernel
// opt-in, read from the environment once per process (docs/Runtime.md has
// the table of every variable). A malformed value is an error of every call,
// naming the variable and its rule, rather than being ignored.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_OVERRIDES_H
#define DGEMM_RUNTIME_OVERRIDES_H

#include "dgemm/Heuristics/KernelConfig.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace dgemm {
namespace runtime {

/// The parsed DGEMM_* variables. An unset or empty variable leaves its field
/// unset.
struct EnvOverrides {
  /// DGEMM_DESC_SLOTS, DGEMM_CLUSTER_M, DGEMM_BLOCK_N, DGEMM_BLOCK_M,
  /// DGEMM_STAGES, DGEMM_RED_MAX_BLOCKS, DGEMM_EPILOGUE (or its older
  /// spellings DGEMM_IN_PLACE_ONLY and DGEMM_PARK), DGEMM_QUAD_B and
  /// DGEMM_UNSAFE, applied by heuristics::applyOverrides.
  heuristics::ConfigOverrides config;
  /// DGEMM_RASTER_BAND.
  std::optional<uint32_t> rasterBand;
  /// DGEMM_ALLOW_UNSAFE_KERNELS=1.
  bool allowUnsafeKernels = false;
  /// "" or the first malformed variable's message; the fields above are then
  /// left as they were before it.
  std::string error;
};

/// Parses the variables, reading each through `lookup` (getenv's contract:
/// null when unset). No side effects; for tests.
EnvOverrides
parseEnvOverrides(const std::function<const char *(const char *)> &lookup);

/// The process's overrides, parsed from the environment at the first call
/// (std::call_once); later changes of the environment are not seen.
std::shared_ptr<const EnvOverrides> envOverrides();

/// Test hook: parses the environment again, for tests that set DGEMM_*
/// variables after the first call. Not for concurrent use with calls.
void reloadEnvOverridesForTesting();

/// dgemm_set_allow_unsafe_kernels: whether kernels built with an Unsafe
/// option (race demonstrations) may be loaded. Once called, it takes
/// precedence over DGEMM_ALLOW_UNSAFE_KERNELS. Thread-safe.
void setAllowUnsafeKernels(bool allow);

/// setAllowUnsafeKernels' last value if it was called, else
/// DGEMM_ALLOW_UNSAFE_KERNELS=1 (false where malformed).
bool unsafeKernelsAllowed();

/// Test hook: forgets setAllowUnsafeKernels, so the variable decides again.
void resetAllowUnsafeKernelsForTesting();

} // namespace runtime
} // namespace dgemm

#endif // DGEMM_RUNTIME_OVERRIDES_H
