//===- Rules.h - Helpers the heuristics' rule files share -------*- C++ -*-===//

#ifndef DGEMM_HEURISTICS_LIB_RULES_H
#define DGEMM_HEURISTICS_LIB_RULES_H

#include "dgemm/Heuristics/KernelConfig.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

namespace dgemm {
namespace heuristics {
namespace detail {

/// ceil(a / b) for a >= 0 and b > 0, without the overflow of a + b - 1.
inline int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// Saturating arithmetic: sizes derived from a config or problem that the
// checks reject must still be computable (and compare as too large), never
// overflow.
inline int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? kInt64Max : kInt64Min;
  return r;
}

inline int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return (a < 0) != (b < 0) ? kInt64Min : kInt64Max;
  return r;
}

/// `value` rounded up to a multiple of `align` (> 0), saturating.
inline int64_t alignTo(int64_t value, int64_t align) {
  return satAdd(value, align - 1) / align * align;
}

/// "<field> must <rule>, got <got>": every rule's message.
inline std::string violation(const char *field, const std::string &rule,
                             int64_t got) {
  std::ostringstream os;
  os << field << " must " << rule << ", got " << got;
  return os.str();
}

/// The rules the kernels that load A and B through the kernel-parameter
/// tensor maps share (the 1D2D and the BF16 families; `family` names them in
/// the messages): stages >= 2, no descriptor slots, no cluster, 128-byte
/// swizzles, num_sms >= 1, the register epilogue, B in order, unsafe at most
/// skip_proxy_fence, shared memory within the target.
std::string checkParameterMapKernel(const KernelConfig &c, const Target &target,
                                    const char *family);

/// The override stages the parameter-map kernels share (the 1D2D and BF16
/// families): block_n, then block_m, each taken when `tile(block_m,
/// block_n)` gives a config that passes checkConfig; then the stages, up to
/// what fits; then the unsafe variants. A rejected override leaves the
/// config as it was.
void applyTileOverrides(
    KernelConfig &config, const ConfigOverrides &overrides,
    const Target &target,
    const std::function<std::optional<KernelConfig>(int, int)> &tile);

} // namespace detail
} // namespace heuristics
} // namespace dgemm

#endif // DGEMM_HEURISTICS_LIB_RULES_H
