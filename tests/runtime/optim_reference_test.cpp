// Every fused optimizer against its double-precision reference for 100 steps (25 under qemu-user,
// which runs these ~30x slower; tests/cross/run_under_qemu.cmake says so), on three segment
// layouts, in fp32 mode and in fp16 mode (fp32 master + fp16 copy). Tolerance: 1e-5 relative
// (|ref| floored at 0.1, see max_relative_error). The fp16 copy must equal the master rounded
// to nearest even with saturation, bit for bit.
#include <gtest/gtest.h>

#include <cstdlib>

#include "backend/device.h"
#include "optim_support.h"

namespace apexnpu::rt::optim::testing {
namespace {

int step_count() { return std::getenv("APEXNPU_TEST_UNDER_EMULATOR") ? 25 : 100; }
constexpr double kTolerance = 1e-5;

struct Param {
  std::size_t case_index;
  bool half_mode;
};

class OptimReference : public ::testing::TestWithParam<Param> {};

TEST_P(OptimReference, MatchesDoublePrecisionFormulaOverManySteps) {
  const Case c = all_cases()[GetParam().case_index];
  const bool half_mode = GetParam().half_mode;
  for (const Layout& layout : standard_layouts()) {
    SCOPED_TRACE(layout.name);
    device(0).float_status().clear();
    Problem problem(layout, half_mode, 1234);
    auto fused = c.fused(layout);
    auto reference = c.reference(layout);
    const std::vector<float> initial = problem.params;
    std::vector<double> ref_params(problem.params.begin(), problem.params.end());
    std::vector<double> ref_grads(layout.total);
    for (int step = 0, steps = step_count(); step < steps; ++step) {
      problem.next_grads(c.grads);
      for (std::size_t k = 0; k < layout.total; ++k) ref_grads[k] = problem.grads[k];
      EXPECT_FALSE(fused->step(problem.buffers())) << "step " << step << " reported non-finite";
      reference->step(ref_params, ref_grads);
      if (half_mode && (step % 10 == 9)) {
        std::size_t mismatches = 0;
        for (std::size_t k = 0; k < layout.total; ++k)
          mismatches += problem.half[k] != saturated_half(problem.params[k]);
        ASSERT_EQ(mismatches, 0u) << "fp16 copy differs from the rounded master at step " << step;
      }
    }
    std::size_t worst = 0;
    const double error = max_relative_error(problem.params, ref_params, &worst);
    EXPECT_LE(error, kTolerance) << "element " << worst << ": fused " << problem.params[worst]
                                 << ", reference " << ref_params[worst];
    // The params must have moved well beyond the tolerance (a no-op kernel cannot pass).
    double moved = 0;
    for (std::size_t k = 0; k < layout.total; ++k)
      moved = std::fmax(moved, std::fabs(problem.params[k] - initial[k]));
    EXPECT_GT(moved, 1e-3);
    EXPECT_FALSE(device(0).float_status().get());
  }
}

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (std::size_t i = 0; i < all_cases().size(); ++i) {
    out.push_back({i, false});
    out.push_back({i, true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllOptimizers, OptimReference, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return all_cases()[info.param.case_index].name +
                                  (info.param.half_mode ? "_fp16" : "_fp32");
                         });

}  // namespace
}  // namespace apexnpu::rt::optim::testing
