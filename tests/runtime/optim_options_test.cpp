// Hyper-parameter checks (torch.optim / reference implementations' ValueErrors) and step()
// argument checks: each raises ArgumentError with a message naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "exec/error.h"
#include "optim_support.h"

namespace apexnpu::rt::optim {
namespace {

void expect_error(const std::function<void()>& fn, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
        << "message '" << e.what() << "' lacks '" << fragment << "'";
  }
}

TEST(OptimOptions, Sgd) {
  expect_error([] { FusedSgd o(SgdOptions{}); }, "SGD: lr is required");
  expect_error([] { FusedSgd o({.lr = -0.1}); }, "SGD: invalid learning rate: -0.1 (lr must be >= 0)");
  expect_error([] { FusedSgd o({.lr = 0.1, .momentum = -0.5}); }, "invalid momentum value: -0.5");
  expect_error([] { FusedSgd o({.lr = 0.1, .weight_decay = -1}); }, "invalid weight_decay value: -1");
  expect_error([] { FusedSgd o({.lr = 0.1, .nesterov = true}); },
               "Nesterov momentum requires a momentum and zero dampening (momentum=0, dampening=0)");
  expect_error([] { FusedSgd o({.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}); },
               "dampening=0.1");
  EXPECT_NO_THROW(FusedSgd({.lr = 0.0, .momentum = 0.9, .nesterov = true}));
}

TEST(OptimOptions, AdamAndAdamW) {
  expect_error([] { FusedAdam o({.lr = -1}); }, "Adam: invalid learning rate: -1");
  expect_error([] { FusedAdam o({.eps = -1e-8}); }, "Adam: invalid epsilon value: -1e-08");
  expect_error([] { FusedAdam o({.beta1 = 1.0}); },
               "invalid beta parameter at index 0: 1 (must be in [0, 1))");
  expect_error([] { FusedAdam o({.beta2 = -0.1}); }, "invalid beta parameter at index 1: -0.1");
  expect_error([] { FusedAdam o({.weight_decay = -0.1}); }, "invalid weight_decay value");
  AdamOptions w = adamw_defaults();
  w.lr = -2;
  expect_error([&] { FusedAdam o(w); }, "AdamW: invalid learning rate: -2");
  expect_error([] { FusedAdam o({.lr = std::nan("")}); }, "Adam: lr is required");
  EXPECT_NO_THROW(FusedAdam({.beta1 = 0.0, .beta2 = 0.0, .eps = 0.0}));
}

TEST(OptimOptions, AdamP) {
  expect_error([] { FusedAdamP o({.delta = -0.1}, SegmentTable{}, {}); }, "AdamP: invalid delta value: -0.1");
  expect_error([] { FusedAdamP o({.wd_ratio = -1}, SegmentTable{}, {}); }, "invalid wd_ratio value");
  expect_error([] { FusedAdamP o({.beta1 = 1.5}, SegmentTable{}, {}); }, "beta parameter at index 0: 1.5");
  expect_error(
      [] {
        FusedAdamP o({}, SegmentTable({{0, 12}, {16, 5}}), {3});
      },
      "AdamP: got 1 row counts for 2 tensors");
  expect_error(
      [] {
        FusedAdamP o({}, SegmentTable({{0, 12}, {16, 5}}), {3, 2});
      },
      "tensor 1 has 5 elements, not a multiple of its 2 rows");
}

TEST(OptimOptions, BertAdam) {
  const SegmentTable t({{0, 4}});
  expect_error([&] { FusedBertAdam o(BertAdamOptions{}, t); }, "BertAdam: lr is required");
  expect_error([&] { FusedBertAdam o({.lr = -1e-3}, t); }, "invalid learning rate: -0.001");
  expect_error([&] { FusedBertAdam o({.lr = 1e-3, .warmup = 1.0}, t); },
               "invalid warmup: 1 (must be in [0, 1) or -1)");
  expect_error([&] { FusedBertAdam o({.lr = 1e-3, .warmup = -0.5}, t); }, "invalid warmup: -0.5");
  expect_error([&] { FusedBertAdam o({.lr = 1e-3, .t_total = 0}, t); }, "invalid t_total: 0");
  expect_error([&] { FusedBertAdam o({.lr = 1e-3, .b1 = 1.0}, t); }, "invalid b1 parameter: 1");
  expect_error([&] { FusedBertAdam o({.lr = 1e-3, .b2 = -0.01}, t); }, "invalid b2 parameter: -0.01");
  expect_error([&] { FusedBertAdam o({.lr = 1e-3, .e = -1}, t); }, "invalid epsilon value: -1");
  expect_error([] { parse_warmup_schedule("linear"); }, "invalid schedule parameter: 'linear'");
  for (const char* name : {"warmup_linear", "warmup_cosine", "warmup_constant", "none"}) {
    EXPECT_STREQ(to_string(parse_warmup_schedule(name)), name);
  }
  EXPECT_NO_THROW(FusedBertAdam({.lr = 1e-3, .warmup = 0.0, .t_total = 10}, t));
}

TEST(OptimOptions, AdadeltaLambRmsprop) {
  expect_error([] { FusedAdadelta o({.rho = 1.1}); }, "Adadelta: invalid rho value: 1.1 (must be in [0, 1])");
  expect_error([] { FusedAdadelta o({.lr = -1}); }, "Adadelta: invalid learning rate");
  expect_error([] { FusedAdadelta o({.eps = -1}); }, "Adadelta: invalid epsilon value");
  expect_error([] { FusedAdadelta o({.weight_decay = -1}); }, "Adadelta: invalid weight_decay value");
  EXPECT_NO_THROW(FusedAdadelta({.rho = 1.0}));
  expect_error([] { FusedLamb o({.beta2 = 1.0}, SegmentTable{}); },
               "Lamb: invalid beta parameter at index 1: 1");
  expect_error([] { FusedLamb o({.eps = -1}, SegmentTable{}); }, "Lamb: invalid epsilon value");
  expect_error([] { FusedLamb o({.lr = -1}, SegmentTable{}); }, "Lamb: invalid learning rate");
  expect_error([] { FusedRmsprop o({.alpha = -0.1}); }, "RMSprop: invalid alpha value: -0.1");
  expect_error([] { FusedRmsprop o({.momentum = -1}); }, "RMSprop: invalid momentum value");
  expect_error([] { FusedRmsprop o({.eps = -1}); }, "RMSprop: invalid epsilon value");
  expect_error([] { FusedRmsprop o({.weight_decay = -1}); }, "RMSprop: invalid weight_decay value");
  expect_error([] { FusedRmspropTf o({.lr = -0.5}); }, "RMSpropTF: invalid learning rate: -0.5");
  expect_error([] { FusedRmspropTf o({.alpha = -1}); }, "RMSpropTF: invalid alpha value");
  expect_error([] { FusedRmspropTf o({.momentum = -1}); }, "RMSpropTF: invalid momentum value");
}

TEST(OptimOptions, SetOptionsChecksAndKeepsTheOldOnesOnError) {
  FusedAdam adam(AdamOptions{});
  adam.set_options({.lr = 5e-4});
  EXPECT_EQ(adam.options().lr, 5e-4);
  expect_error([&] { adam.set_options({.lr = -1}); }, "invalid learning rate");
  EXPECT_EQ(adam.options().lr, 5e-4);
  expect_error([&] { adam.set_step_count(-1); }, "step count must be >= 0, got -1");
  adam.set_step_count(7);
  EXPECT_EQ(adam.step_count(), 7);
}

TEST(OptimOptions, StepArgumentErrors) {
  std::vector<float> p(64), g(64), s1(64), s2(64);
  FusedAdam adam({.amsgrad = true});
  const FusedBuffers ok{p.data(), g.data(), nullptr, 64, nullptr};
  expect_error(
      [&] {
        adam.step({nullptr, g.data(), nullptr, 64, nullptr}, {s1.data(), s2.data()});
      },
      "Adam: params and grads buffers must be set (got null params and a grads buffer)");
  expect_error(
      [&] {
        adam.step({p.data(), p.data(), nullptr, 64, nullptr}, {s1.data(), s2.data()});
      },
      "params and grads must be different buffers");
  expect_error(
      [&] {
        adam.step(ok, {s1.data(), s2.data(), nullptr});
      },
      "Adam: state buffer 'max_exp_avg_sq' is needed with these options but is null");
  FusedSgd sgd({.lr = 0.1, .momentum = 0.9});
  expect_error([&] { sgd.step(ok, {}); }, "SGD: state buffer 'momentum_buffer'");
  FusedRmsprop rms({.centered = true});
  expect_error([&] { rms.step(ok, {s1.data()}); }, "RMSprop: state buffer 'grad_avg'");
  FusedLamb lamb({}, SegmentTable({{0, 60}, {64, 10}}));
  expect_error(
      [&] {
        lamb.step(ok, {s1.data(), s2.data()});
      },
      "Lamb: the buffers hold 64 elements but the segment table reaches element 74");
  EXPECT_EQ(adam.step_count(), 0);  // failed steps do not count
}

}  // namespace
}  // namespace apexnpu::rt::optim
