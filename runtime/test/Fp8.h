//===- Fp8.h - FP8 e4m3 (e4m3fn) encoding for the tests ---------*- C++ -*-===//
//
// The tests build FP8 operands on the host and compute their references from
// the exact decoded values, so encoder and decoder live here (and are tested
// against the format's definition in Fp8Test.cpp).
//
// e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; only
// S.1111.111 is NaN; largest finite 448; smallest subnormal 2^-9.
//
//===----------------------------------------------------------------------===//

#ifndef DGEMM_RUNTIME_TEST_FP8_H
#define DGEMM_RUNTIME_TEST_FP8_H

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace dgemm {
namespace test {

inline float decodeE4m3(uint8_t code) {
  int exponent = (code >> 3) & 0xf, mantissa = code & 0x7;
  float sign = (code & 0x80) ? -1.f : 1.f;
  if (exponent == 0xf && mantissa == 0x7)
    return std::numeric_limits<float>::quiet_NaN();
  if (exponent == 0)
    return sign * std::ldexp(float(mantissa), -9);
  return sign * std::ldexp(1.f + mantissa / 8.f, exponent - 7);
}

/// decodeE4m3 for all 256 codes.
inline const std::array<float, 256> &e4m3Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i)
      t[i] = decodeE4m3(uint8_t(i));
    return t;
  }();
  return table;
}

/// Round to nearest, ties to even; NaN -> 0x7f; magnitudes beyond 448 (and
/// infinities) saturate to +-448 (torch would give NaN; the tests never
/// produce such values).
inline uint8_t encodeE4m3(float x) {
  if (std::isnan(x))
    return 0x7f;
  uint8_t sign = std::signbit(x) ? 0x80 : 0;
  float a = std::fabs(x);
  const std::array<float, 256> &table = e4m3Table();
  // Codes 0..126 are the non-negative finite values in increasing order.
  const float *begin = table.data(), *end = table.data() + 127;
  const float *hi = std::lower_bound(begin, end, a);
  if (hi == end)
    return sign | 126;
  if (*hi == a || hi == begin)
    return sign | uint8_t(hi - begin);
  const float *lo = hi - 1;
  float dLo = a - *lo, dHi = *hi - a;
  uint8_t code;
  if (dLo < dHi)
    code = uint8_t(lo - begin);
  else if (dHi < dLo)
    code = uint8_t(hi - begin);
  else // Tie: the even code, i.e. the one with a zero mantissa LSB.
    code = uint8_t(((lo - begin) % 2 == 0 ? lo : hi) - begin);
  return sign | code;
}

/// Round-to-nearest-even to bfloat16, returned as float.
inline float roundToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN
    return x;
  bits += 0x7fff + ((bits >> 16) & 1);
  bits &= 0xffff0000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

} // namespace test
} // namespace dgemm

#endif // DGEMM_RUNTIME_TEST_FP8_H
