// The optimizers' secondary API: LAMB's global norm supplied by the caller (one optimizer over
// several buffers), BertAdam's scheduled learning rate, the AdamP projection report (and that
// the reference test's gradients really exercise every projection branch), LAMB trust ratios.
#include <gtest/gtest.h>

#include <cmath>

#include "optim_support.h"

namespace apexnpu::rt::optim::testing {
namespace {

TEST(OptimApi, LambGlobalNormFromTheCallerEqualsTheComputedOne) {
  const Layout l = make_layout("lamb", {300, 5000, 77}, {0, 0, 0});
  const LambOptions o{.lr = 1e-2, .use_global_grad_norm = true};
  Problem a(l, false, 3), b(l, false, 3);
  FusedLamb computed(o, table(l)), supplied(o, table(l)), scaled(o, table(l));
  std::vector<float> m1(l.total), v1(l.total), m2(l.total), v2(l.total), m3(l.total), v3(l.total);
  Problem c(l, false, 3);
  for (int step = 0; step < 5; ++step) {
    a.next_grads(Grads::random);
    b.grads = a.grads;
    c.grads = a.grads;
    const double norm = std::sqrt(supplied.grad_sum_squares(b.grads.data()));
    ASSERT_GT(norm, 1.0);  // so the division happens
    computed.step(a.buffers(), {m1.data(), v1.data()});
    supplied.step(b.buffers(), {m2.data(), v2.data()}, norm);
    scaled.step(c.buffers(), {m3.data(), v3.data()}, 4.0 * norm);
  }
  EXPECT_EQ(a.params, b.params);
  EXPECT_NE(a.params, c.params);  // the supplied norm is really used
  for (const float r : computed.trust_ratios()) {
    EXPECT_GT(r, 0.0f);
    EXPECT_TRUE(std::isfinite(r));
  }
}

TEST(OptimApi, LambSumOfSquaresCoversSegmentsOnly) {
  const Layout l = make_layout("s", {3, 20}, {0, 0});
  std::vector<float> g(l.total, 100.0f);  // padding holds garbage that must not count
  for (const Segment& s : l.segments)
    for (std::size_t k = s.offset; k < s.offset + s.numel; ++k) g[k] = 0.5f;
  FusedLamb lamb(LambOptions{}, table(l));
  EXPECT_DOUBLE_EQ(lamb.grad_sum_squares(g.data()), 23 * 0.25);
}

TEST(OptimApi, BertAdamScheduledLearningRate) {
  const Layout l = make_layout("b", {10}, {0});
  for (const WarmupSchedule s : {WarmupSchedule::warmup_linear, WarmupSchedule::warmup_cosine,
                                 WarmupSchedule::warmup_constant, WarmupSchedule::none}) {
    FusedBertAdam opt({.lr = 0.1, .warmup = 0.2, .t_total = 50, .schedule = s}, table(l));
    for (const std::int64_t step : {0, 5, 10, 11, 30, 49, 60}) {
      opt.set_step_count(step);
      EXPECT_NEAR(opt.scheduled_lr(), 0.1 * bert_schedule(s, step / 50.0, 0.2), 1e-15)
          << to_string(s) << " step " << step;
    }
  }
  FusedBertAdam constant({.lr = 0.1}, table(l));  // t_total -1: constant
  constant.set_step_count(1000);
  EXPECT_EQ(constant.scheduled_lr(), 0.1);
  FusedBertAdam linear({.lr = 1.0, .warmup = 0.1, .t_total = 100}, table(l));
  linear.set_step_count(5);
  EXPECT_DOUBLE_EQ(linear.scheduled_lr(), 0.5);  // warming up: 0.05 / 0.1
  linear.set_step_count(55);
  EXPECT_DOUBLE_EQ(linear.scheduled_lr(), 0.5);  // (0.55 - 1) / (0.1 - 1)
  linear.set_step_count(100);
  EXPECT_DOUBLE_EQ(linear.scheduled_lr(), 0.0);
}

TEST(OptimApi, AdamPReferenceGradientsExerciseEveryProjection) {
  using P = FusedAdamP::Projection;
  for (const Layout& l : standard_layouts()) {
    SCOPED_TRACE(l.name);
    Problem problem(l, false, 1234);
    FusedAdamP opt({.weight_decay = 1e-2}, table(l), l.rows, kTestBlockElements);
    std::vector<float> m(l.total), v(l.total);
    problem.next_grads(Grads::adamp_mix);
    opt.step(problem.buffers(), {m.data(), v.data()});
    int counts[3] = {0, 0, 0};
    for (std::size_t s = 0; s < l.segments.size(); ++s) {
      const P p = opt.projections()[s];
      ++counts[static_cast<int>(p)];
      if (l.rows[s] == 0) {
        EXPECT_EQ(p, P::none) << "tensor " << s;
      } else if (s % 3 == 1) {
        EXPECT_EQ(p, P::channel) << "tensor " << s << " (gradient orthogonal row by row)";
      } else if (s % 3 == 2 && l.rows[s] > 1) {
        EXPECT_EQ(p, P::layer) << "tensor " << s << " (gradient orthogonal to the whole tensor)";
      }
    }
    if (l.name != "one_big") {
      EXPECT_GT(counts[static_cast<int>(P::channel)], 0);
      EXPECT_GT(counts[static_cast<int>(P::layer)], 0);
      EXPECT_GT(counts[static_cast<int>(P::none)], 0);
    }
  }
}

}  // namespace
}  // namespace apexnpu::rt::optim::testing
