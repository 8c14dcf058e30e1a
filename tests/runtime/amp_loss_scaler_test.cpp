#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "amp/loss_scaler.h"
#include "exec/error.h"

namespace apexnpu::rt {
namespace {

TEST(LossScaler, DefaultsAreApexs) {
  LossScaler s;
  EXPECT_TRUE(s.dynamic());
  EXPECT_EQ(s.scale(), 65536.0);
  EXPECT_EQ(s.options().window, 2000);
  EXPECT_EQ(s.options().max_scale, 16777216.0);
  EXPECT_FALSE(s.options().min_scale.has_value());
}

TEST(LossScaler, OverflowSkipsAndBacksOff) {
  LossScaler s;
  EXPECT_TRUE(s.update(true));
  EXPECT_EQ(s.scale(), 32768.0);
  EXPECT_TRUE(s.update(true));
  EXPECT_EQ(s.scale(), 16384.0);
  EXPECT_FALSE(s.update(false));
  EXPECT_EQ(s.scale(), 16384.0);
  EXPECT_EQ(s.state().unskipped, 1);
}

TEST(LossScaler, GrowsAfterWindowCleanStepsAndOverflowRestartsTheCount) {
  LossScalerOptions o;
  o.init_scale = 8.0;
  o.window = 3;
  o.growth_factor = 4.0;
  LossScaler s(o);
  s.update(false);
  s.update(false);
  EXPECT_TRUE(s.update(true));  // resets the count
  EXPECT_EQ(s.scale(), 4.0);
  s.update(false);
  s.update(false);
  EXPECT_EQ(s.scale(), 4.0);
  EXPECT_FALSE(s.update(false));  // third clean step in a row
  EXPECT_EQ(s.scale(), 16.0);
  EXPECT_EQ(s.state().unskipped, 0);
}

TEST(LossScaler, RespectsMinAndMax) {
  LossScalerOptions o;
  o.init_scale = 4.0;
  o.min_scale = 1.5;
  o.max_scale = 10.0;
  o.window = 1;
  LossScaler s(o);
  s.update(true);
  EXPECT_EQ(s.scale(), 2.0);
  s.update(true);
  EXPECT_EQ(s.scale(), 1.5);
  s.update(true);
  EXPECT_EQ(s.scale(), 1.5);
  s.update(false);
  EXPECT_EQ(s.scale(), 3.0);
  s.update(false);
  s.update(false);
  EXPECT_EQ(s.scale(), 10.0);
  // Without a minimum the scale keeps halving; the initial scale is capped by the maximum.
  LossScalerOptions capped;
  capped.init_scale = 1e9;
  EXPECT_EQ(LossScaler(capped).scale(), 16777216.0);
  LossScaler unbounded;
  for (int i = 0; i < 40; ++i) unbounded.update(true);
  EXPECT_EQ(unbounded.scale(), 65536.0 / std::ldexp(1.0, 40));
}

TEST(LossScaler, StaticNeverSkipsOrChanges) {
  LossScaler s(LossScalerOptions::static_scale(128.0));
  EXPECT_FALSE(s.dynamic());
  EXPECT_FALSE(s.update(true));
  for (int i = 0; i < 5000; ++i) s.update(false);
  EXPECT_EQ(s.scale(), 128.0);
}

TEST(LossScaler, SavesAndLoadsState) {
  LossScalerOptions o;
  o.window = 4;
  LossScaler a(o);
  a.update(true);
  a.update(false);
  a.update(false);
  const LossScalerState saved = a.state();
  EXPECT_EQ(saved.loss_scale, 32768.0);
  EXPECT_EQ(saved.unskipped, 2);
  LossScaler b(o);
  b.load_state(saved);
  // Both continue identically: two more clean steps complete the window.
  for (LossScaler* s : {&a, &b}) {
    s->update(false);
    s->update(false);
  }
  EXPECT_EQ(a.scale(), 65536.0);
  EXPECT_EQ(b.scale(), 65536.0);
  EXPECT_THROW(b.load_state({0.0, 0}), ArgumentError);
  EXPECT_THROW(b.load_state({NAN, 0}), ArgumentError);
  EXPECT_THROW(b.load_state({1.0, -1}), ArgumentError);
  // A loaded count beyond the window grows on the next clean step instead of never.
  b.load_state({2.0, 10});
  b.update(false);
  EXPECT_EQ(b.scale(), 4.0);
}

TEST(LossScaler, ValidatesOptions) {
  auto message = [](LossScalerOptions o) {
    try {
      LossScaler s(o);
    } catch (const ArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  LossScalerOptions o;
  o.init_scale = -1;
  EXPECT_EQ(message(o), "loss scaler: init_scale must be finite and > 0, got -1");
  EXPECT_EQ(message(LossScalerOptions::static_scale(0)),
            "loss scaler: static loss_scale must be finite and > 0, got 0");
  o = {};
  o.growth_factor = 0.5;
  EXPECT_EQ(message(o), "loss scaler: scale_growth_factor must be >= 1, got 0.5");
  o = {};
  o.backoff_factor = 1.5;
  EXPECT_EQ(message(o), "loss scaler: scale_backoff_factor must be in (0, 1], got 1.5");
  o = {};
  o.window = 0;
  EXPECT_EQ(message(o), "loss scaler: scale_window must be >= 1, got 0");
  o = {};
  o.min_scale = 0.0;
  EXPECT_EQ(message(o), "loss scaler: min_loss_scale must be finite and > 0, got 0");
  o = {};
  o.max_scale = 0.0;
  EXPECT_EQ(message(o), "loss scaler: max_loss_scale must be > 0, got 0");
  o = {};
  o.min_scale = 100.0;
  o.max_scale = 10.0;
  EXPECT_EQ(message(o), "loss scaler: max_loss_scale (10) is below min_loss_scale (100)");
}

}  // namespace
}  // namespace apexnpu::rt
