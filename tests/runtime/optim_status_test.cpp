// inf/NaN reaching the params raise the device float status (and step() returns true); an fp16
// copy beyond +-65504 saturates and raises it; clean steps leave it alone.
#include <gtest/gtest.h>

#include <limits>

#include "backend/device.h"
#include "optim_support.h"

namespace apexnpu::rt::optim::testing {
namespace {

class OptimStatus : public ::testing::TestWithParam<std::size_t> {};

TEST_P(OptimStatus, NonFiniteGradientRaisesFloatStatus) {
  const Case c = all_cases()[GetParam()];
  const Layout layout = make_layout("small", {40, 33, 100}, {4, 0, 10});
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    Problem problem(layout, false, 5);
    auto fused = c.fused(layout);
    device(0).float_status().clear();
    problem.next_grads(c.grads);
    EXPECT_FALSE(fused->step(problem.buffers()));
    EXPECT_FALSE(device(0).float_status().get());
    problem.next_grads(c.grads);
    problem.grads[layout.segments[1].offset + 7] = bad;
    EXPECT_TRUE(fused->step(problem.buffers())) << "grad " << bad;
    EXPECT_TRUE(device(0).float_status().clear()) << "grad " << bad;
  }
}

INSTANTIATE_TEST_SUITE_P(AllOptimizers, OptimStatus, ::testing::Range<std::size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return all_cases()[info.param].name;
                         });

TEST(OptimStatus, HalfCopySaturatesAndRaisesWhileMasterKeepsItsValue) {
  FusedSgd sgd({.lr = 1.0});
  std::vector<float> p = {70000.0f, -1e6f, 1.5f, 65504.0f, 2.0f};
  std::vector<float> g = {0.0f, 0.0f, 0.5f, -100.0f, 0.0f};  // 65504 + 100 leaves the range
  std::vector<half_bits> h(p.size(), 0);
  device(0).float_status().clear();
  EXPECT_TRUE(sgd.step({p.data(), g.data(), h.data(), p.size(), &device(0)}, {}));
  EXPECT_TRUE(device(0).float_status().clear());
  EXPECT_EQ(p[0], 70000.0f);
  EXPECT_EQ(p[3], 65604.0f);
  EXPECT_EQ(h[0], 0x7BFF);  // +65504
  EXPECT_EQ(h[1], 0xFBFF);  // -65504
  EXPECT_EQ(h[2], 0x3C00);  // 1.0
  EXPECT_EQ(h[3], 0x7BFF);
  EXPECT_EQ(h[4], 0x4000);  // 2.0
}

TEST(OptimStatus, InRangeHalfCopyLeavesStatusClear) {
  FusedAdam adam(AdamOptions{});
  std::vector<float> p(37, 0.25f), g(37, 0.01f), m(37), v(37);
  std::vector<half_bits> h(37);
  device(0).float_status().clear();
  EXPECT_FALSE(adam.step({p.data(), g.data(), h.data(), p.size(), nullptr}, {m.data(), v.data()}));
  EXPECT_FALSE(device(0).float_status().get());
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_EQ(h[i], saturated_half(p[i]));
}

}  // namespace
}  // namespace apexnpu::rt::optim::testing
