// ReLU and its gradient on fp16 values (backend/half_relu.h) against their definition: the fp32
// computation torch's kernels do (max(x, 0) keeping x when both are zero; s <= 0 ? 0 : g) on
// the exact fp32 values, stored back with the saturating conversion. Every fp16 input, at every
// ISA level, at unaligned starts and odd lengths, in place, and over several chunks.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "backend/half_relu.h"
#include "exec/half.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

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

class HalfReluIsa : public ::testing::TestWithParam<IsaLevel> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam())) GTEST_SKIP() << isa_name(GetParam()) << " not supported";
  }
};

TEST_P(HalfReluIsa, ReluOfEveryHalfIsTheFp32ReluSaturated) {
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
  for (std::size_t i = 0; i < all.size(); ++i)
    ASSERT_EQ(in_place[i], relu_definition(all[i], overflow));
}

TEST_P(HalfReluIsa, ReluBackwardOfEveryPairWithASpecialIsTheFp32ThresholdSaturated) {
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

TEST_P(HalfReluIsa, ReportsOnlyWhatItStores) {
  ScopedIsaLevel isa(GetParam());
  for (const std::size_t where : {std::size_t{0}, std::size_t{9}, std::size_t{16}, std::size_t{30}}) {
    std::vector<half_bits> x(31, 0x3C00), g(31, 0x7C00), out(31);
    EXPECT_FALSE(relu_half(x.data(), out.data(), x.size()));
    EXPECT_FALSE(relu_backward_half(g.data(), std::vector<half_bits>(31, 0xBC00).data(),
                                    out.data(), 31));  // every inf grad is blocked
    x[where] = 0x7C00;
    EXPECT_TRUE(relu_half(x.data(), out.data(), x.size())) << where;
    EXPECT_EQ(out[where], kHalfMaxBits);
    EXPECT_TRUE(relu_backward_half(g.data(), x.data(), out.data(), 31)) << where;
    x[where] = 0xFC00;  // -inf: relu gives +0, nothing to report
    EXPECT_FALSE(relu_half(x.data(), out.data(), x.size())) << where;
  }
}

TEST_P(HalfReluIsa, ManyChunksGiveTheSameBits) {
  ScopedIsaLevel isa(GetParam());
  std::mt19937 rng(3);
  const std::size_t n = 5 * 65536 + 77;
  std::vector<half_bits> x(n), g(n), out(n), back(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<half_bits>(rng());
    g[i] = static_cast<half_bits>(rng());
  }
  const bool relu_reported = relu_half(x.data(), out.data(), n);
  const bool back_reported = relu_backward_half(g.data(), x.data(), back.data(), n);
  bool relu_overflow = false, back_overflow = false;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], relu_definition(x[i], relu_overflow));
    ASSERT_EQ(back[i], relu_backward_definition(g[i], x[i], back_overflow));
  }
  EXPECT_EQ(relu_reported, relu_overflow);
  EXPECT_EQ(back_reported, back_overflow);
}

INSTANTIATE_TEST_SUITE_P(AllLevels, HalfReluIsa, ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace apexnpu::rt
