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

// Every kind of the registry refuses the options its CaseTraits list (optim_support.h), with an
// ArgumentError naming what is wrong: a new kind's checks are tested by listing them there.
TEST(OptimOptions, EveryKindRefusesWhatItsTraitsList) {
  const testing::Layout layout = testing::make_layout("one", {40}, {4});
  for_each_optimizer_kind([&](const auto& kind) {
    using Opt = typename std::remove_cvref_t<decltype(kind)>::Optimizer;
    const auto rejected = testing::CaseTraits<Opt>::rejected(kind.defaults);
    EXPECT_FALSE(rejected.empty()) << kind.python_class << " lists no options it refuses";
    for (const auto& [options, fragment] : rejected) {
      SCOPED_TRACE(kind.python_class);
      expect_error([&] { testing::make_fused_optimizer<Opt>(layout, options); }, fragment);
    }
  });
}

TEST(OptimOptions, MessagesNameTheClassTheDefaultsBelongTo) {
  AdamOptions w = adamw_defaults();
  w.lr = -2;
  expect_error([&] { FusedAdam o(w); }, "AdamW: invalid learning rate: -2");
  expect_error([] { FusedAdam o({.lr = -1}); }, "Adam: invalid learning rate: -1");
}

TEST(OptimOptions, BoundaryValuesAreAccepted) {
  EXPECT_NO_THROW(FusedSgd({.lr = 0.0, .momentum = 0.9, .nesterov = true}));
  EXPECT_NO_THROW(FusedAdam({.beta1 = 0.0, .beta2 = 0.0, .eps = 0.0}));
  EXPECT_NO_THROW(FusedAdadelta({.rho = 1.0}));
  EXPECT_NO_THROW(FusedBertAdam({.lr = 1e-3, .warmup = 0.0, .t_total = 10}, SegmentTable({{0, 4}})));
}

TEST(OptimOptions, AdamPRowCountsMatchItsTensors) {
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

TEST(OptimOptions, BertAdamSchedulesByName) {
  expect_error([] { parse_warmup_schedule("linear"); }, "invalid schedule parameter: 'linear'");
  for (const char* name : {"warmup_linear", "warmup_cosine", "warmup_constant", "none"}) {
    EXPECT_STREQ(to_string(parse_warmup_schedule(name)), name);
  }
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
