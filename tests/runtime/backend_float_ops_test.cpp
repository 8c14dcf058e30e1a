// backend/float_ops.h: fp32 saturation as an Ascend 910 stores results, at every ISA level.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/float_ops.h"
#include "exec/isa.h"

namespace apexnpu::rt {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMax = std::numeric_limits<float>::max();

std::vector<float> ramp(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) * 0.5f - 1000.0f;
  return x;
}

class FloatOpsTest : public ::testing::TestWithParam<IsaLevel> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam())) GTEST_SKIP() << isa_name(GetParam()) << " not supported";
  }
};

TEST_P(FloatOpsTest, FiniteValuesAreLeftAlone) {
  ScopedIsaLevel isa(GetParam());
  auto x = ramp(100003);  // past one chunk, and not a multiple of any vector width
  x[7] = kMax;
  x[8] = -kMax;
  x[9] = std::numeric_limits<float>::denorm_min();
  const auto before = x;
  EXPECT_FALSE(has_nonfinite_float(x.data(), x.size()));
  EXPECT_FALSE(saturate_float(x.data(), x.size()));
  EXPECT_EQ(0, std::memcmp(before.data(), x.data(), x.size() * sizeof(float)));
}

TEST_P(FloatOpsTest, InfinitiesSaturateAndNanBecomesPositiveZero) {
  ScopedIsaLevel isa(GetParam());
  auto x = ramp(70001);
  x[0] = kInf;
  x[1] = -kInf;
  x[69999] = std::numeric_limits<float>::quiet_NaN();
  x[70000] = -std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(has_nonfinite_float(x.data(), x.size()));
  EXPECT_TRUE(saturate_float(x.data(), x.size()));
  EXPECT_EQ(kMax, x[0]);
  EXPECT_EQ(-kMax, x[1]);
  EXPECT_EQ(0.0f, x[69999]);
  EXPECT_FALSE(std::signbit(x[69999]));
  EXPECT_FALSE(std::signbit(x[70000]));
  EXPECT_EQ(-1000.0f + 0.5f * 2, x[2]);
  EXPECT_FALSE(has_nonfinite_float(x.data(), x.size()));
}

TEST_P(FloatOpsTest, EachPositionIsSeen) {
  ScopedIsaLevel isa(GetParam());
  // One bad value anywhere (every lane and tail position of every level) is found.
  for (std::size_t at = 0; at < 67; ++at) {
    auto x = ramp(67);
    x[at] = -kInf;
    EXPECT_TRUE(has_nonfinite_float(x.data(), x.size())) << at;
    EXPECT_TRUE(saturate_float(x.data(), x.size())) << at;
    EXPECT_EQ(-kMax, x[at]) << at;
  }
  EXPECT_FALSE(has_nonfinite_float(nullptr, 0));
  EXPECT_FALSE(saturate_float(nullptr, 0));
}

INSTANTIATE_TEST_SUITE_P(AllLevels, FloatOpsTest, ::testing::ValuesIn(kIsaLevels),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

}  // namespace
}  // namespace apexnpu::rt
