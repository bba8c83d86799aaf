//===- Fp8Test.cpp - The tests' FP8 e4m3 encoder and decoder --------------===//

#include "Fp8.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace dgemm::test;

namespace {

TEST(Fp8Test, DecodesKnownCodes) {
  EXPECT_EQ(decodeE4m3(0x00), 0.f);
  EXPECT_EQ(decodeE4m3(0x38), 1.f); // 0.0111.000
  EXPECT_EQ(decodeE4m3(0xb8), -1.f);
  EXPECT_EQ(decodeE4m3(0x7e), 448.f);               // largest finite
  EXPECT_EQ(decodeE4m3(0x01), std::ldexp(1.f, -9)); // smallest subnormal
  EXPECT_EQ(decodeE4m3(0x08), std::ldexp(1.f, -6)); // smallest normal
  EXPECT_EQ(decodeE4m3(0x3c), 1.5f);
  EXPECT_TRUE(std::isnan(decodeE4m3(0x7f)));
  EXPECT_TRUE(std::isnan(decodeE4m3(0xff)));
}

TEST(Fp8Test, RoundTripsEveryFiniteCode) {
  for (int code = 0; code < 256; ++code) {
    if ((code & 0x7f) == 0x7f)
      continue;
    EXPECT_EQ(encodeE4m3(decodeE4m3(uint8_t(code))), code) << code;
  }
}

TEST(Fp8Test, RoundsToNearestEven) {
  // Between 1 (0x38) and 1.125 (0x39): the midpoint goes to the even 0x38.
  EXPECT_EQ(encodeE4m3(1.0625f), 0x38);
  // Between 1.125 (0x39) and 1.25 (0x3a): the midpoint goes to 0x3a.
  EXPECT_EQ(encodeE4m3(1.1875f), 0x3a);
  EXPECT_EQ(encodeE4m3(1.06f), 0x38);
  EXPECT_EQ(encodeE4m3(1.07f), 0x39);
  EXPECT_EQ(encodeE4m3(-1.07f), 0xb9);
  // Below half the smallest subnormal rounds to zero; the half goes to even.
  EXPECT_EQ(encodeE4m3(std::ldexp(1.f, -11)), 0x00);
  EXPECT_EQ(encodeE4m3(std::ldexp(1.f, -10)), 0x00);
  EXPECT_EQ(encodeE4m3(std::ldexp(1.5f, -10)), 0x01);
}

TEST(Fp8Test, SaturatesAndKeepsNaN) {
  EXPECT_EQ(encodeE4m3(1e6f), 0x7e);
  EXPECT_EQ(encodeE4m3(-1e6f), 0xfe);
  EXPECT_EQ(encodeE4m3(INFINITY), 0x7e);
  EXPECT_EQ(encodeE4m3(NAN), 0x7f);
}

TEST(Fp8Test, Bf16Rounding) {
  EXPECT_EQ(roundToBf16(1.f), 1.f);
  // 1 + 2^-8 is halfway between two bf16 values: ties to even (1).
  EXPECT_EQ(roundToBf16(1.f + std::ldexp(1.f, -8)), 1.f);
  EXPECT_EQ(roundToBf16(1.f + std::ldexp(3.f, -9)), 1.f + std::ldexp(1.f, -7));
}

} // namespace
