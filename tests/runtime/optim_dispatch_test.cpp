// Every optimizer gives bit-identical params, fp16 copies and state buffers at every ISA level
// the CPU has (x86-64: scalar, AVX2, AVX-512; aarch64: scalar, NEON; each forced) and with 1, 2
// and 3 threads, on a layout that spans several chunks (so the threads really split it and
// per-tensor reductions combine partials from several chunks).
#include <gtest/gtest.h>

#include "exec/isa.h"
#include "exec/thread_pool.h"
#include "optim_support.h"

namespace apexnpu::rt::optim::testing {
namespace {

struct Snapshot {
  std::vector<float> params;
  std::vector<half_bits> half;
  States state;
};

Snapshot run(const Case& c, const Layout& layout, bool half_mode) {
  Problem problem(layout, half_mode, 99);
  auto fused = c.fused(layout);
  for (int step = 0; step < 3; ++step) {
    problem.next_grads(c.grads);
    fused->step(problem.buffers());
  }
  return {problem.params, problem.half, fused->state};
}

std::size_t count_differences(const Snapshot& a, const Snapshot& b) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < a.params.size(); ++i)
    n += std::memcmp(&a.params[i], &b.params[i], sizeof(float)) != 0;
  for (std::size_t i = 0; i < a.half.size(); ++i) n += a.half[i] != b.half[i];
  for (std::size_t s = 0; s < a.state.size(); ++s)
    for (std::size_t i = 0; i < a.state[s].size(); ++i)
      n += std::memcmp(&a.state[s][i], &b.state[s][i], sizeof(float)) != 0;
  return n;
}

class OptimDispatch : public ::testing::TestWithParam<std::size_t> {};

TEST_P(OptimDispatch, BitIdenticalAcrossIsaLevelsAndThreadCounts) {
  const Case c = all_cases()[GetParam()];
  const Layout layout = wide_layout();
  for (const bool half_mode : {false, true}) {
    SCOPED_TRACE(half_mode ? "fp16 mode" : "fp32 mode");
    Snapshot baseline;
    {
      ScopedIsaLevel isa(IsaLevel::scalar);
      ScopedNumThreads threads(1);
      baseline = run(c, layout, half_mode);
    }
    int levels_run = 0;
    for (const IsaLevel level : kIsaLevels) {
      if (!isa_supported(level)) continue;
      ++levels_run;
      for (const std::size_t thread_count : {1, 2, 3}) {
        SCOPED_TRACE(std::string(isa_name(level)) + " x" + std::to_string(thread_count));
        ScopedIsaLevel isa(level);
        ScopedNumThreads threads(thread_count);
        EXPECT_EQ(count_differences(baseline, run(c, layout, half_mode)), 0u);
      }
    }
    if (levels_run < kIsaLevelCount) {
      std::cout << "note: only " << levels_run << " ISA level(s) available on this CPU\n";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOptimizers, OptimDispatch, ::testing::Range<std::size_t>(0, all_cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return all_cases()[info.param].name;
                         });

}  // namespace
}  // namespace apexnpu::rt::optim::testing
