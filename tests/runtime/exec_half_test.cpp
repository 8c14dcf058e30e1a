// fp16 conversion: the scalar reference against an independent oracle, and every ISA level's
// vectorised conversion against the scalar reference, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "exec/convert.h"
#include "exec/half.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

// Independent decoding of a binary16 from its definition.
double decode_half(std::uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  if (exponent == 0x1F)
    return mantissa ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// Oracle for the saturating conversion: nearest finite half by search, ties to even.
struct Expected {
  std::uint16_t bits;
  bool overflow;
};
Expected oracle(float x) {
  if (std::isnan(x)) return {0, true};
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(x));
  if (a > 65504.0) return {static_cast<std::uint16_t>(sign | 0x7BFF), true};
  // Non-negative finite halves 0x0000..0x7BFF are increasing in their bit pattern.
  std::uint16_t lo = 0, hi = 0x7BFF;
  while (hi - lo > 1) {
    const auto mid = static_cast<std::uint16_t>((lo + hi) / 2);
    (decode_half(mid) <= a ? lo : hi) = mid;
  }
  const double dlo = a - decode_half(lo), dhi = decode_half(hi) - a;
  std::uint16_t pick;
  if (dlo < dhi)
    pick = lo;
  else if (dhi < dlo)
    pick = hi;
  else
    pick = (lo & 1) ? hi : lo;
  if (decode_half(hi) <= a) pick = hi;
  return {static_cast<std::uint16_t>(sign | pick), false};
}

// Floats that exercise rounding: every half, the exact midpoints between neighbouring halves
// and one float ulp either side, the saturation boundary, specials, and a strided sweep of all
// 2^32 bit patterns plus random ones.
std::vector<float> interesting_floats() {
  std::vector<float> out;
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {
    for (const std::uint16_t sign : {std::uint16_t{0}, std::uint16_t{0x8000}}) {
      const float v = static_cast<float>(decode_half(static_cast<std::uint16_t>(h | sign)));
      const float mid = static_cast<float>((decode_half(static_cast<std::uint16_t>(h | sign)) +
                                            decode_half(static_cast<std::uint16_t>((h + 1) | sign))) /
                                           2);
      for (const float f :
           {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), std::nextafter(mid, -1e9f)})
        out.push_back(f);
    }
  }
  for (const float f : {65504.0f, 65505.0f, 65519.0f, 65519.996f, 65520.0f, 65536.0f, 1e10f,
                        std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(),
                        5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f, 0.0f})
    for (const float s : {1.0f, -1.0f}) out.push_back(f * s);
  out.push_back(std::bit_cast<float>(0xFFC00001u));  // negative NaN with payload
  for (std::uint64_t bits = 0; bits < (std::uint64_t{1} << 32); bits += 4093)
    out.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3000.0f);
  for (int i = 0; i < 100000; ++i) out.push_back(normal(rng));
  return out;
}

TEST(Half, DecodesEveryHalfExactly) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const double expected = decode_half(bits);
    const float got = half_to_float(bits);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      EXPECT_EQ(static_cast<double>(got), expected) << std::hex << h;
      EXPECT_EQ(std::signbit(got), (h & 0x8000) != 0) << std::hex << h;
    }
  }
}

TEST(Half, EncodesLikeTheOracle) {
  std::size_t checked = 0;
  for (const float f : interesting_floats()) {
    const Expected want = oracle(f);
    bool overflow = false;
    const std::uint16_t got = float_to_half(f, overflow);
    ASSERT_EQ(got, want.bits) << "x=" << f << " bits=" << std::hex << std::bit_cast<std::uint32_t>(f);
    ASSERT_EQ(overflow, want.overflow) << "x=" << f;
    ++checked;
  }
  EXPECT_GT(checked, 1000000u);
}

TEST(Half, SaturationAndNanRules) {
  bool overflow = false;
  EXPECT_EQ(float_to_half(65504.0f, overflow), 0x7BFF);
  EXPECT_FALSE(overflow);
  EXPECT_EQ(float_to_half(65519.0f, overflow), 0x7BFF);  // IEEE would give 65504 too, but > max
  EXPECT_TRUE(overflow);
  overflow = false;
  EXPECT_EQ(float_to_half(65520.0f, overflow), 0x7BFF);  // IEEE would round to inf
  EXPECT_TRUE(overflow);
  overflow = false;
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity(), overflow), 0xFBFF);
  EXPECT_TRUE(overflow);
  overflow = false;
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::quiet_NaN(), overflow), 0x0000);
  EXPECT_TRUE(overflow);
  overflow = true;  // never cleared by a clean conversion
  EXPECT_EQ(float_to_half(1.0f, overflow), 0x3C00);
  EXPECT_TRUE(overflow);
}

TEST(Half, RoundTripsEveryFiniteHalf) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if (((bits >> 10) & 0x1F) == 0x1F) continue;
    bool overflow = false;
    EXPECT_EQ(float_to_half(half_to_float(bits), overflow), bits) << std::hex << h;
    EXPECT_FALSE(overflow);
  }
}

class HalfIsa : public ::testing::TestWithParam<IsaLevel> {};

TEST_P(HalfIsa, VectorisedMatchesScalarReference) {
  if (!isa_supported(GetParam())) GTEST_SKIP() << isa_name(GetParam()) << " not supported by this CPU";
  ScopedIsaLevel isa(GetParam());
  const std::vector<float> input = interesting_floats();
  // Unaligned starts and odd lengths exercise the vector bodies and the scalar tails.
  for (const std::size_t start : {std::size_t{0}, std::size_t{3}}) {
    const std::size_t n = input.size() - start - 5;
    std::vector<std::uint16_t> got(n);
    const bool overflow = convert_float_to_half(input.data() + start, got.data(), n);
    bool want_overflow = false;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint16_t want = float_to_half(input[start + i], want_overflow);
      ASSERT_EQ(got[i], want) << "x=" << input[start + i] << " at " << i;
    }
    EXPECT_EQ(overflow, want_overflow);
  }
  // Overflow is reported only when present, including from a scalar tail or a single lane.
  for (const std::size_t where :
       {std::size_t{0}, std::size_t{7}, std::size_t{15}, std::size_t{16}, std::size_t{30}}) {
    std::vector<float> clean(31, 1.5f);
    std::vector<std::uint16_t> out(31);
    EXPECT_FALSE(convert_float_to_half(clean.data(), out.data(), clean.size()));
    clean[where] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(convert_float_to_half(clean.data(), out.data(), clean.size())) << where;
    EXPECT_EQ(out[where], 0);
  }
  std::vector<std::uint16_t> all(65536 + 3);
  for (std::uint32_t h = 0; h < all.size(); ++h) all[h] = static_cast<std::uint16_t>(h);
  std::vector<float> decoded(all.size());
  convert_half_to_float(all.data(), decoded.data(), all.size());
  for (std::size_t h = 0; h < all.size(); ++h) {
    const float want = half_to_float(all[h]);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(decoded[h]), std::bit_cast<std::uint32_t>(want)) << std::hex << h;
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevels, HalfIsa, ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace apexnpu::rt
