// The fp16 operations of backend/half_ops.h (saturating copy, add, multiply and divide by a
// scalar, ReLU and its gradient, masked fill) against their definitions: the fp32 computation torch's
// kernels do on the exact fp32 values, stored back with the saturating conversion. Every fp16
// input, at every ISA level, at unaligned starts and odd lengths, in place, and over chunks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/half_ops.h"
#include "exec/half.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

half_bits saturate_definition(half_bits x, bool& overflow) {
  return float_to_half(half_to_float(x), overflow);
}

half_bits add_definition(half_bits a, half_bits b, bool& overflow) {
  return float_to_half(half_to_float(a) + half_to_float(b), overflow);
}

half_bits multiply_definition(half_bits x, float factor, bool& overflow) {
  return float_to_half(half_to_float(x) * factor, overflow);
}

half_bits divide_definition(half_bits x, float divisor, bool& overflow) {
  return float_to_half(half_to_float(x) / divisor, overflow);
}

half_bits relu_definition(half_bits x, bool& overflow) {
  const float f = half_to_float(x);
  return float_to_half(f < 0.0f ? 0.0f : f, overflow);  // NaN < 0 is false: NaN stays NaN
}

half_bits relu_backward_definition(half_bits grad, half_bits self, bool& overflow) {
  return float_to_half(half_to_float(self) <= 0.0f ? 0.0f : half_to_float(grad), overflow);
}

std::vector<half_bits> every_half(std::size_t extra) {
  std::vector<half_bits> all(65536 + extra);
  for (std::size_t h = 0; h < all.size(); ++h) all[h] = static_cast<half_bits>(h);
  return all;
}

// Inputs for the other operand: zeros, specials, boundaries, random values.
std::vector<half_bits> some_halves() {
  std::vector<half_bits> out = {0x0000, 0x8000, 0x0001, 0x8001, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF,
                                0x7C00, 0xFC00, 0x7C01, 0x7E00, 0xFC01, 0xFE00, 0xFFFF, 0x03FF};
  std::mt19937 rng(7);
  for (int i = 0; i < 48; ++i) out.push_back(static_cast<half_bits>(rng()));
  return out;
}

class HalfOpsIsa : public ::testing::TestWithParam<IsaLevel> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam())) GTEST_SKIP() << isa_name(GetParam()) << " not supported";
  }
};

TEST_P(HalfOpsIsa, SaturateOfEveryHalfIsItsFp32ValueStoredBack) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<half_bits> all = every_half(9);
  std::vector<half_bits> got(all.size());
  const bool reported = saturate_half(all.data() + 1, got.data(), all.size() - 1);
  bool overflow = false;
  for (std::size_t i = 1; i < all.size(); ++i)
    ASSERT_EQ(got[i - 1], saturate_definition(all[i], overflow)) << std::hex << all[i];
  EXPECT_TRUE(reported && overflow);
  std::vector<half_bits> finite(all.begin(), all.begin() + 0x7C00);
  EXPECT_FALSE(saturate_half(finite.data(), finite.data(), finite.size()));
}

TEST_P(HalfOpsIsa, AddOfEveryHalfWithSomeIsTheFp32SumSaturated) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<half_bits> all = every_half(3);
  std::vector<half_bits> other(all.size()), got(all.size());
  for (const half_bits fixed : some_halves()) {
    other.assign(all.size(), fixed);
    for (const bool in_place : {false, true}) {
      std::vector<half_bits> a(all.begin() + 3, all.end());
      half_bits* out = in_place ? a.data() : got.data();
      const std::vector<half_bits> a_before = a;
      const bool reported = add_half(a.data(), other.data(), out, a.size());
      bool overflow = false;
      for (std::size_t i = 0; i < a.size(); ++i)
        ASSERT_EQ(out[i], add_definition(a_before[i], fixed, overflow))
            << std::hex << a_before[i] << " + " << fixed;
      EXPECT_EQ(reported, overflow);
    }
  }
  // 65504 + 8 is 65512 in fp32: above the largest half, so saturated and reported although
  // IEEE rounding would give 65504.
  const std::vector<half_bits> max(5, 0x7BFF), eight(5, 0x4800);
  EXPECT_TRUE(add_half(max.data(), eight.data(), got.data(), 5));
  EXPECT_EQ(got[4], kHalfMaxBits);
}

// Scalars: powers of two (exact scaling, fp16 subnormals rounded), others that round, zero,
// tiny and huge ones, infinities and NaN.
// Powers of two up to the ends of the float range (divide multiplies by their exact
// reciprocal), subnormal ones among them.
const float kScalars[] = {4.0f,     128.0f,    0.25f,     3.0f,      -7.0f,      0.1f,      1e-5f,  6.5e4f,
                          3e38f,    1e-40f,    0.0f,      -0.0f,     INFINITY,   -INFINITY, NAN,    -1024.0f,
                          0x1p127f, 0x1p-126f, 0x1p-127f, 0x1p-149f, -0x1p-140f, 0x1p-1f,   0x1p24f};

TEST_P(HalfOpsIsa, MultiplyAndDivideOfEveryHalfAreTheFp32ResultSaturated) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<half_bits> all = every_half(11);
  for (const float scalar : kScalars) {
    for (const bool in_place : {false, true}) {
      for (const bool divide : {false, true}) {
        std::vector<half_bits> x(all.begin() + 5, all.end()), got(x.size());
        const std::vector<half_bits> before = x;
        half_bits* out = in_place ? x.data() : got.data();
        const bool reported = divide ? divide_half(x.data(), out, x.size(), scalar)
                                     : multiply_half(x.data(), out, x.size(), scalar);
        bool overflow = false;
        for (std::size_t i = 0; i < x.size(); ++i) {
          const half_bits want = divide ? divide_definition(before[i], scalar, overflow)
                                        : multiply_definition(before[i], scalar, overflow);
          ASSERT_EQ(out[i], want) << std::hex << before[i] << (divide ? " / " : " * ") << scalar;
        }
        EXPECT_EQ(reported, overflow) << scalar;
      }
    }
  }
  // 65504 * 1.0001 and 65504 / 0.9999 are below 65520 (IEEE would round them to 65504): above
  // the largest half all the same, so saturated and reported.
  const std::vector<half_bits> max(9, 0x7BFF);
  std::vector<half_bits> out(9);
  EXPECT_TRUE(multiply_half(max.data(), out.data(), 9, 1.0001f));
  EXPECT_TRUE(divide_half(max.data(), out.data(), 9, 0.9999f));
  EXPECT_EQ(out[8], kHalfMaxBits);
  EXPECT_FALSE(divide_half(max.data(), out.data(), 9, 1.0f));
}

TEST_P(HalfOpsIsa, ReluOfEveryHalfIsTheFp32ReluSaturated) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<half_bits> all = every_half(7);
  for (const std::size_t start : {std::size_t{0}, std::size_t{3}}) {
    const std::size_t n = all.size() - start - 2;
    std::vector<half_bits> got(n);
    const bool reported = relu_half(all.data() + start, got.data(), n);
    bool overflow = false;
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], relu_definition(all[start + i], overflow)) << std::hex << all[start + i];
    EXPECT_EQ(reported, overflow);
  }
  std::vector<half_bits> in_place = all;
  relu_half(in_place.data(), in_place.data(), in_place.size());
  bool overflow = false;
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(in_place[i], relu_definition(all[i], overflow));
}

TEST_P(HalfOpsIsa, ReluBackwardOfEveryPairWithASpecialIsTheFp32ThresholdSaturated) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<half_bits> all = every_half(5);
  std::vector<half_bits> other(all.size()), got(all.size());
  for (const half_bits fixed : some_halves()) {
    other.assign(all.size(), fixed);
    for (const bool grad_varies : {true, false}) {
      const half_bits* grad = grad_varies ? all.data() : other.data();
      const half_bits* self = grad_varies ? other.data() : all.data();
      const std::size_t n = all.size() - 1;
      const bool reported = relu_backward_half(grad + 1, self + 1, got.data(), n);
      bool overflow = false;
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(got[i], relu_backward_definition(grad[i + 1], self[i + 1], overflow))
            << std::hex << "grad " << grad[i + 1] << " self " << self[i + 1];
      EXPECT_EQ(reported, overflow);
    }
  }
}

TEST_P(HalfOpsIsa, ReportsOnlyWhatItStores) {
  ScopedIsaLevel isa(GetParam());
  for (const std::size_t where : {std::size_t{0}, std::size_t{9}, std::size_t{16}, std::size_t{30}}) {
    std::vector<half_bits> x(31, 0x3C00), g(31, 0x7C00), out(31);
    EXPECT_FALSE(relu_half(x.data(), out.data(), x.size()));
    EXPECT_FALSE(relu_backward_half(g.data(), std::vector<half_bits>(31, 0xBC00).data(), out.data(),
                                    31));  // every inf grad is blocked
    x[where] = 0x7C00;
    EXPECT_TRUE(relu_half(x.data(), out.data(), x.size())) << where;
    EXPECT_EQ(out[where], kHalfMaxBits);
    EXPECT_TRUE(relu_backward_half(g.data(), x.data(), out.data(), 31)) << where;
    x[where] = 0xFC00;  // -inf: relu gives +0, nothing to report
    EXPECT_FALSE(relu_half(x.data(), out.data(), x.size())) << where;
  }
}

// The definition: the fill where the mask (repeating every `period` entries) is set, else the
// value stored saturating; only unselected values can be reported.
half_bits masked_fill_definition(half_bits x, bool selected, half_bits fill, bool& overflow) {
  if (selected) return fill;
  return float_to_half(half_to_float(x), overflow);
}

TEST_P(HalfOpsIsa, MaskedFillOfEveryHalfUnderRepeatingMasksIsTheFillOrTheValueSaturated) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<half_bits> all = every_half(0);
  std::mt19937 rng(5);
  // Periods: a whole-tensor mask, a causal 16x16 mask, odd ones, one of a single entry.
  for (const std::size_t period :
       {std::size_t{65536}, std::size_t{256}, std::size_t{7}, std::size_t{1}, std::size_t{4096}}) {
    std::vector<std::uint8_t> mask(period);
    for (std::size_t j = 0; j < period; ++j)
      mask[j] =
          period == 256 ? static_cast<std::uint8_t>(j % 16 > j / 16) : static_cast<std::uint8_t>(rng() & 1);
    for (const half_bits fill : {half_bits{0xF0E2}, half_bits{0x0000}, half_bits{0x7BFF}}) {
      for (const bool in_place : {false, true}) {
        std::vector<half_bits> x = all, got(all.size());
        half_bits* out = in_place ? x.data() : got.data();
        const bool reported = masked_fill_half(x.data(), mask.data(), period, out, x.size(), fill);
        bool overflow = false;
        for (std::size_t i = 0; i < all.size(); ++i)
          ASSERT_EQ(out[i], masked_fill_definition(all[i], mask[i % period] != 0, fill, overflow))
              << std::hex << all[i] << " at " << std::dec << i << " period " << period;
        EXPECT_EQ(reported, overflow) << period;
      }
    }
  }
}

TEST_P(HalfOpsIsa, MaskedFillReportsOnlyUnselectedSpecials) {
  ScopedIsaLevel isa(GetParam());
  const std::vector<std::uint8_t> mask = {1, 0, 1};
  std::vector<half_bits> x = {0x7C00, 0x3C00, 0x7E00, 0xFC00, 0x3C00, 0xFFFF}, out(6);
  EXPECT_FALSE(masked_fill_half(x.data(), mask.data(), 3, out.data(), 6, 0xC000));  // all hidden
  EXPECT_EQ(out, (std::vector<half_bits>{0xC000, 0x3C00, 0xC000, 0xC000, 0x3C00, 0xC000}));
  x[4] = 0xFC00;  // -inf where the mask is clear: stored -65504 and reported
  EXPECT_TRUE(masked_fill_half(x.data(), mask.data(), 3, out.data(), 6, 0xC000));
  EXPECT_EQ(out[4], kHalfMaxBits | 0x8000u);
}

TEST_P(HalfOpsIsa, ManyChunksGiveTheSameBits) {
  ScopedIsaLevel isa(GetParam());
  std::mt19937 rng(3);
  const std::size_t n = 5 * 65536 + 77;
  std::vector<half_bits> x(n), g(n), out(n), back(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<half_bits>(rng());
    g[i] = static_cast<half_bits>(rng());
  }
  std::vector<half_bits> copy(n), sum(n);
  const bool relu_reported = relu_half(x.data(), out.data(), n);
  const bool back_reported = relu_backward_half(g.data(), x.data(), back.data(), n);
  const bool copy_reported = saturate_half(x.data(), copy.data(), n);
  const bool sum_reported = add_half(x.data(), g.data(), sum.data(), n);
  std::vector<half_bits> quotient(n);
  const bool quotient_reported = divide_half(x.data(), quotient.data(), n, 0.3f);
  bool quotient_overflow = false;
  bool relu_overflow = false, back_overflow = false, copy_overflow = false, sum_overflow = false;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], relu_definition(x[i], relu_overflow));
    ASSERT_EQ(back[i], relu_backward_definition(g[i], x[i], back_overflow));
    ASSERT_EQ(copy[i], saturate_definition(x[i], copy_overflow));
    ASSERT_EQ(sum[i], add_definition(x[i], g[i], sum_overflow));
    ASSERT_EQ(quotient[i], divide_definition(x[i], 0.3f, quotient_overflow));
  }
  EXPECT_EQ(quotient_reported, quotient_overflow);
  EXPECT_EQ(relu_reported, relu_overflow);
  EXPECT_EQ(back_reported, back_overflow);
  EXPECT_EQ(copy_reported, copy_overflow);
  EXPECT_EQ(sum_reported, sum_overflow);
  // A mask period that does not divide the chunk size: each chunk starts mid-period.
  const std::size_t period = 1000 + 3;
  const std::size_t rows = n / period;
  std::vector<std::uint8_t> mask(period);
  for (std::size_t j = 0; j < period; ++j) mask[j] = static_cast<std::uint8_t>(rng() % 3 == 0);
  std::vector<half_bits> filled(rows * period);
  const bool filled_reported =
      masked_fill_half(x.data(), mask.data(), period, filled.data(), filled.size(), 0x1234);
  bool filled_overflow = false;
  for (std::size_t i = 0; i < filled.size(); ++i)
    ASSERT_EQ(filled[i], masked_fill_definition(x[i], mask[i % period] != 0, 0x1234, filled_overflow)) << i;
  EXPECT_EQ(filled_reported, filled_overflow);
}

INSTANTIATE_TEST_SUITE_P(AllLevels, HalfOpsIsa, ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace apexnpu::rt
