#include "amp/loss_scaler.h"

#include <algorithm>
#include <cmath>

#include "exec/error.h"

namespace apexnpu::rt {
namespace {
bool positive_finite(double x) { return std::isfinite(x) && x > 0.0; }
}  // namespace

LossScaler::LossScaler(const LossScalerOptions& options) : options_(options) {
  const char* what = options.dynamic ? "loss scaler: init_scale" : "loss scaler: static loss_scale";
  if (!positive_finite(options.init_scale))
    throw ArgumentError(concat(what, " must be finite and > 0, got ", options.init_scale));
  if (!(std::isfinite(options.growth_factor) && options.growth_factor >= 1.0))
    throw ArgumentError(concat("loss scaler: scale_growth_factor must be >= 1, got ", options.growth_factor));
  if (!(options.backoff_factor > 0.0 && options.backoff_factor <= 1.0))
    throw ArgumentError(
        concat("loss scaler: scale_backoff_factor must be in (0, 1], got ", options.backoff_factor));
  if (options.window < 1)
    throw ArgumentError(concat("loss scaler: scale_window must be >= 1, got ", options.window));
  if (options.min_scale && !positive_finite(*options.min_scale))
    throw ArgumentError(
        concat("loss scaler: min_loss_scale must be finite and > 0, got ", *options.min_scale));
  if (!(options.max_scale > 0.0))
    throw ArgumentError(concat("loss scaler: max_loss_scale must be > 0, got ", options.max_scale));
  if (options.min_scale && options.max_scale < *options.min_scale)
    throw ArgumentError(concat("loss scaler: max_loss_scale (", options.max_scale,
                               ") is below min_loss_scale (", *options.min_scale, ")"));
  state_.loss_scale = options.dynamic ? std::min(options.init_scale, options.max_scale) : options.init_scale;
  state_.unskipped = 0;
}

bool LossScaler::update(bool overflow) noexcept {
  bool skip = false;
  if (overflow && options_.dynamic) {
    skip = true;
    double next = state_.loss_scale * options_.backoff_factor;
    if (options_.min_scale) next = std::max(next, *options_.min_scale);
    state_.loss_scale = next;
    state_.unskipped = 0;
  } else {
    ++state_.unskipped;
  }
  if (options_.dynamic && state_.unskipped >= options_.window) {  // >=: a loaded state may exceed it
    state_.loss_scale = std::min(state_.loss_scale * options_.growth_factor, options_.max_scale);
    state_.unskipped = 0;
  }
  return skip;
}

void LossScaler::load_state(const LossScalerState& state) {
  if (!positive_finite(state.loss_scale))
    throw ArgumentError(
        concat("loss scaler state: loss_scale must be finite and > 0, got ", state.loss_scale));
  if (state.unskipped < 0)
    throw ArgumentError(concat("loss scaler state: unskipped must be >= 0, got ", state.unskipped));
  state_ = state;
}

}  // namespace apexnpu::rt
