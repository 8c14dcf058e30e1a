// exec/bf16.h's scalar conversions against their definitions, written independently: the exact
// value of every bf16 pattern from its fields, and the nearest bf16 of an fp32 value found by
// comparing it (in double, where both candidates and the midpoint are exact) with the two
// bf16 values around it, ties to the even one; NaN and the saturation mode's clamp by the rules.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "exec/bf16.h"

namespace apexnpu::rt {
namespace {

// The value of a bf16 pattern from its sign, exponent and mantissa fields.
double bf16_value(bf16_bits b) {
  const int sign = (b & 0x8000) ? -1 : 1;
  const int exponent = (b >> 7) & 0xFF;
  const int mantissa = b & 0x7F;
  if (exponent == 0xFF) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -133);  // 2^-126 * m / 128
  return sign * std::ldexp(128 + mantissa, exponent - 134);
}

// Round to nearest even, IEEE overflow: the largest bf16 and 2^128 (the "next" value, inf) are
// the candidates at the top, so a value at or past their midpoint gives inf.
bf16_bits nearest_bf16(float value) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<bf16_bits>((bits >> 16) & 0x8000u);
  const double magnitude = std::fabs(static_cast<double>(value));
  const auto below = static_cast<bf16_bits>((bits >> 16) & 0x7FFFu);  // truncation: <= magnitude
  const auto above = static_cast<bf16_bits>(below + 1);
  const double low = bf16_value(below);
  const double high = above == 0x7F80 ? std::ldexp(1.0, 128) : bf16_value(above);
  if (magnitude == low) return static_cast<bf16_bits>(sign | below);
  const double midpoint = (low + high) / 2;
  bf16_bits pick = below;
  if (magnitude > midpoint || (magnitude == midpoint && (below & 1u))) pick = above;
  return static_cast<bf16_bits>(sign | pick);
}

// fp32 patterns: every bf16 pattern with low halves around the rounding boundaries, and random
// ones.
std::vector<std::uint32_t> some_floats() {
  std::vector<std::uint32_t> out;
  const std::uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x4000, 0xC000};
  for (std::uint32_t top = 0; top < 0x10000; ++top)
    for (const std::uint32_t low : lows) out.push_back((top << 16) | low);
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) out.push_back(static_cast<std::uint32_t>(rng()));
  return out;
}

TEST(Bf16, WideningIsExactForEveryPattern) {
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float got = bf16_to_float(static_cast<bf16_bits>(b));
    const double want = bf16_value(static_cast<bf16_bits>(b));
    if (std::isnan(want)) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got), b << 16) << std::hex << b;  // bits kept
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << std::hex << b;
      ASSERT_EQ(std::signbit(got), (b & 0x8000u) != 0) << std::hex << b;
    }
  }
}

TEST(Bf16, InfNanModeRoundsToNearestEvenAndStoresOneNan) {
  for (const std::uint32_t bits : some_floats()) {
    const float value = std::bit_cast<float>(bits);
    const bf16_bits got = float_to_bf16(value);
    if (std::isnan(value)) {
      ASSERT_EQ(got, 0x7FC0) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(got, nearest_bf16(value)) << std::hex << bits;
    bool overflow = false;
    ASSERT_EQ(float_to_bf16(value, Bf16Mode::inf_nan, overflow), got);
    ASSERT_FALSE(overflow);
  }
  // Ties: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 and goes to the even 1; 1 + 3 * 2^-8
  // goes up to the even 1 + 2^-6.
  EXPECT_EQ(float_to_bf16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * 0x1p-8f), 0x3F82);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7F7F8000u)), 0x7F80);  // past the largest: inf
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x00008000u)), 0x0000);  // subnormal tie to even
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x00018000u)), 0x0002);
  EXPECT_EQ(float_to_bf16(-INFINITY), 0xFF80);
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7F800001u)), 0x7FC0);  // signalling
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0xFFA12345u)), 0x7FC0);  // negative, payload
}

TEST(Bf16, SaturationModeClampsAndStoresNanAsZero) {
  const float largest = bf16_to_float(kBf16MaxBits);
  for (const std::uint32_t bits : some_floats()) {
    const float value = std::bit_cast<float>(bits);
    bool overflow = false;
    const bf16_bits got = float_to_bf16_saturated(value, overflow);
    if (std::isnan(value)) {
      ASSERT_EQ(got, 0) << std::hex << bits;
      ASSERT_TRUE(overflow);
    } else if (std::fabs(value) > largest) {
      ASSERT_EQ(got, std::signbit(value) ? 0xFF7F : 0x7F7F) << std::hex << bits;
      ASSERT_TRUE(overflow);
    } else {
      ASSERT_EQ(got, nearest_bf16(value)) << std::hex << bits;
      ASSERT_FALSE(overflow) << std::hex << bits;
    }
  }
  bool overflow = false;
  EXPECT_EQ(float_to_bf16(largest, Bf16Mode::saturation, overflow), kBf16MaxBits);
  EXPECT_FALSE(overflow);
  // Just above the largest bf16: IEEE would round it down to the largest, but it is beyond the
  // range, so it is reported (as the emulation's fp16 stores report 65505).
  EXPECT_EQ(float_to_bf16(std::bit_cast<float>(0x7F7F0001u), Bf16Mode::saturation, overflow), kBf16MaxBits);
  EXPECT_TRUE(overflow);
}

}  // namespace
}  // namespace apexnpu::rt
