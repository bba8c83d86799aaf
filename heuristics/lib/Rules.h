//===- Rules.h - Helpers the heuristics' rule files share -------*- C++ -*-===//

#ifndef DGEMM_HEURISTICS_LIB_RULES_H
#define DGEMM_HEURISTICS_LIB_RULES_H

#include <cstdint>
#include <sstream>
#include <string>

namespace dgemm {
namespace heuristics {
namespace detail {

/// ceil(a / b) for a >= 0 and b > 0, without the overflow of a + b - 1.
inline int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// "<field> must <rule>, got <got>": every rule's message.
inline std::string violation(const char *field, const std::string &rule,
                             int64_t got) {
  std::ostringstream os;
  os << field << " must " << rule << ", got " << got;
  return os.str();
}

} // namespace detail
} // namespace heuristics
} // namespace dgemm

#endif // DGEMM_HEURISTICS_LIB_RULES_H
