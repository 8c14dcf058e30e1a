// The whole-buffer bf16 conversions (exec/convert_bf16.h) and the one-pass bf16 operations
// (backend/bf16_ops.h) at every ISA level against exec/bf16.h's scalar reference (itself tested
// against the definitions in exec_bf16_test.cpp): every bf16 pattern, fp32 patterns around every
// rounding boundary, both modes, unaligned starts and odd lengths, in place, and over chunks.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/bf16_ops.h"
#include "exec/bf16.h"
#include "exec/chunking.h"
#include "exec/convert_bf16.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

constexpr Bf16Mode kModes[] = {Bf16Mode::inf_nan, Bf16Mode::saturation};

std::vector<bf16_bits> every_bf16(std::size_t extra) {
  std::vector<bf16_bits> all(65536 + extra);
  for (std::size_t b = 0; b < all.size(); ++b) all[b] = static_cast<bf16_bits>(b);
  return all;
}

// fp32 values: each bf16 pattern with low halves at and around the rounding boundary.
std::vector<float> boundary_floats() {
  std::vector<float> out;
  const std::uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234};
  for (std::uint32_t top = 0; top < 0x10000; ++top)
    for (const std::uint32_t low : lows) out.push_back(std::bit_cast<float>((top << 16) | low));
  return out;
}

// Other operands: zeros, ones, the largest, specials, subnormals, random patterns.
std::vector<bf16_bits> some_bf16() {
  std::vector<bf16_bits> out = {0x0000, 0x8000, 0x0001, 0x8001, 0x3F80, 0xBF80, 0x7F7F, 0xFF7F,
                                0x7F80, 0xFF80, 0x7F81, 0x7FC0, 0xFFC1, 0x007F, 0x3B80, 0x4B80};
  std::mt19937 rng(5);
  for (int i = 0; i < 40; ++i) out.push_back(static_cast<bf16_bits>(rng()));
  return out;
}

class Bf16Isa : public ::testing::TestWithParam<IsaLevel> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam())) GTEST_SKIP() << isa_name(GetParam()) << " not supported";
  }
};

TEST_P(Bf16Isa, WideningOfEveryPatternIsExact) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<bf16_bits> all = every_bf16(7);
  std::vector<float> got(all.size() - 3);
  convert_bf16_to_float(all.data() + 3, got.data(), got.size());  // unaligned start, odd length
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(bf16_to_float(all[i + 3])));
}

TEST_P(Bf16Isa, NarrowingIsTheScalarStoreInBothModes) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<float> values = boundary_floats();
  for (const Bf16Mode mode : kModes) {
    std::vector<bf16_bits> got(values.size() - 1);
    const bool reported = convert_float_to_bf16(values.data() + 1, got.data(), got.size(), mode);
    bool overflow = false;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], float_to_bf16(values[i + 1], mode, overflow))
          << std::hex << std::bit_cast<std::uint32_t>(values[i + 1]);
    EXPECT_EQ(reported, overflow);
    EXPECT_EQ(reported, mode == Bf16Mode::saturation);  // the values hold NaN and inf
    // Finite values within the range report nothing.
    const std::vector<float> tame = {1.0f, -2.5f, 0.0f, 3e38f, -1e-40f};
    std::vector<bf16_bits> out(tame.size());
    EXPECT_FALSE(convert_float_to_bf16(tame.data(), out.data(), out.size(), mode));
  }
}

TEST_P(Bf16Isa, CopyAndAddOfEveryPatternAreTheFp32ResultStored) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<bf16_bits> all = every_bf16(5);
  for (const Bf16Mode mode : kModes) {
    std::vector<bf16_bits> copied(all.size() - 5);
    const bool copy_reported = copy_bf16(all.data() + 5, copied.data(), copied.size(), mode);
    bool copy_overflow = false;
    for (std::size_t i = 0; i < copied.size(); ++i)
      ASSERT_EQ(copied[i], float_to_bf16(bf16_to_float(all[i + 5]), mode, copy_overflow))
          << std::hex << all[i + 5];
    EXPECT_EQ(copy_reported, copy_overflow);
    for (const bf16_bits fixed : some_bf16()) {
      for (const bool in_place : {false, true}) {
        std::vector<bf16_bits> a(all.begin() + 1, all.end());
        const std::vector<bf16_bits> before = a;
        const std::vector<bf16_bits> other(a.size(), fixed);
        std::vector<bf16_bits> got(a.size());
        bf16_bits* out = in_place ? a.data() : got.data();
        const bool reported = add_bf16(a.data(), other.data(), out, a.size(), mode);
        bool overflow = false;
        for (std::size_t i = 0; i < a.size(); ++i)
          ASSERT_EQ(out[i], float_to_bf16(bf16_to_float(before[i]) + bf16_to_float(fixed), mode, overflow))
              << std::hex << before[i] << " + " << fixed;
        EXPECT_EQ(reported, overflow);
      }
    }
  }
  // The largest bf16 plus half its unit in the last place is a tie: IEEE rounds it to inf
  // (INF/NAN mode); saturation mode stores the largest and reports it.
  const std::vector<bf16_bits> largest(3, kBf16MaxBits), half_ulp(3, 0x7B00);  // 2^119
  std::vector<bf16_bits> out(3);
  EXPECT_FALSE(add_bf16(largest.data(), half_ulp.data(), out.data(), 3, Bf16Mode::inf_nan));
  EXPECT_EQ(out[2], 0x7F80);
  EXPECT_TRUE(add_bf16(largest.data(), half_ulp.data(), out.data(), 3, Bf16Mode::saturation));
  EXPECT_EQ(out[2], kBf16MaxBits);
}

TEST_P(Bf16Isa, ManyChunksGiveTheScalarResults) {
  ScopedIsaLevel isa(GetParam());
  const std::size_t n = 3 * kChunkElements + 77;
  std::mt19937 rng(3);
  std::vector<bf16_bits> a(n), b(n);
  std::vector<float> f(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<bf16_bits>(rng());
    b[i] = static_cast<bf16_bits>(rng());
    f[i] = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
  }
  for (const Bf16Mode mode : kModes) {
    std::vector<bf16_bits> sum(n), narrowed(n);
    std::vector<float> widened(n);
    const bool sum_reported = add_bf16(a.data(), b.data(), sum.data(), n, mode);
    const bool narrow_reported = convert_float_to_bf16(f.data(), narrowed.data(), n, mode);
    convert_bf16_to_float(a.data(), widened.data(), n);
    bool sum_overflow = false, narrow_overflow = false;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(sum[i], float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]), mode, sum_overflow)) << i;
      ASSERT_EQ(narrowed[i], float_to_bf16(f[i], mode, narrow_overflow)) << i;
      ASSERT_EQ(std::bit_cast<std::uint32_t>(widened[i]), std::uint32_t{a[i]} << 16) << i;
    }
    EXPECT_EQ(sum_reported, sum_overflow);
    EXPECT_EQ(narrow_reported, narrow_overflow);
  }
}

INSTANTIATE_TEST_SUITE_P(AllLevels, Bf16Isa, ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace apexnpu::rt
