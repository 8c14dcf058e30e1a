#pragma once
// The loss scaler (apex.amp's LossScaler): static, or dynamic with back-off on overflow and
// growth after `window` clean steps. The overflow itself comes from unscale() (amp/unscale.h).
//
//   LossScaler scaler(LossScalerOptions::dynamic_scale());     // 2^16, x2 / x0.5, 2000, max 2^24
//   loss *= scaler.scale(); backward;
//   bool overflow = unscale(grads, DType::float32, n, 1.0f / scaler.scale(), nullptr, dev);
//   if (!scaler.update(overflow)) optimizer.step();
//
// update(overflow): dynamic: on overflow scale = max(scale * backoff, min) (or without min:
// scale * backoff), the clean-step count resets and update returns true (skip the step);
// otherwise the count grows and reaching `window` sets scale = min(scale * growth, max) and
// resets it. Static: never skips, the scale never changes (as apex). The initial dynamic scale
// is min(init_scale, max_scale), as apex.
#include <cstdint>
#include <optional>

namespace apexnpu::rt {

struct LossScalerOptions {
  bool dynamic = true;
  double init_scale = 65536.0;  // dynamic: the initial scale; static: the scale
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t window = 2000;
  std::optional<double> min_scale;  // none: no lower bound
  double max_scale = 16777216.0;    // 2^24

  static LossScalerOptions static_scale(double scale) {
    LossScalerOptions o;
    o.dynamic = false;
    o.init_scale = scale;
    return o;
  }
  static LossScalerOptions dynamic_scale() { return {}; }
};

// What amp.state_dict() saves per loss scaler (apex: loss_scale and unskipped).
struct LossScalerState {
  double loss_scale = 65536.0;
  std::int64_t unskipped = 0;
};

class LossScaler {
 public:
  // ArgumentError for: a scale that is not finite and > 0; growth_factor < 1;
  // backoff_factor outside (0, 1]; window < 1; min_scale not finite and > 0;
  // max_scale not > 0 (inf allowed) or < min_scale.
  explicit LossScaler(const LossScalerOptions& options = {});

  double scale() const noexcept { return state_.loss_scale; }
  bool dynamic() const noexcept { return options_.dynamic; }
  const LossScalerOptions& options() const noexcept { return options_; }

  // Returns true if the step is to be skipped.
  bool update(bool overflow) noexcept;

  LossScalerState state() const noexcept { return state_; }
  // ArgumentError for a loss_scale that is not finite and > 0 or a negative unskipped.
  void load_state(const LossScalerState& state);

 private:
  LossScalerOptions options_;
  LossScalerState state_;
};

}  // namespace apexnpu::rt
