#pragma once
// What every fused optimizer's options share: torch's required learning rate and the checks
// their `validate` is written with. Each kind's options struct (defaults and `fields()`, by the
// Python-side names that are the binding's option keys) and its `validate` live beside the kind,
// in optim/<name>.h and <name>.cpp. A check failure throws apexnpu::rt::ArgumentError
// (exec/error.h; the binding's ValueError) naming the parameter, its value and the accepted
// range, as torch.optim and the reference implementations do.
#include <limits>
#include <string>
#include <tuple>  // each options struct's fields()

#include "optim/fields.h"

namespace apexnpu::rt::optim {

// torch's `required` learning rate: NaN until the caller sets one.
inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

namespace checks {

// `v` as the shortest text that reads back to it.
std::string number(double v);
// Throws "<optimizer>: invalid <what>: <value> (<rule>)".
[[noreturn]] void invalid(const char* optimizer, const char* what, double value, const char* rule);

// NaN fails every comparison, so each check is written as "accept when in range".
void require_lr(const char* optimizer, double lr);
void require_non_negative(const char* optimizer, const char* what, double v);
void require_beta(const char* optimizer, const char* what, double v);

// Adam and AdamP check the same five hyper-parameters, as torch.optim.Adam does.
template <typename AdamLikeOptions>
void require_adam_like(const char* optimizer, const AdamLikeOptions& o) {
  require_lr(optimizer, o.lr);
  require_non_negative(optimizer, "epsilon value", o.eps);
  require_beta(optimizer, "beta parameter at index 0", o.beta1);
  require_beta(optimizer, "beta parameter at index 1", o.beta2);
  require_non_negative(optimizer, "weight_decay value", o.weight_decay);
}

// RMSprop and RMSpropTF check the same five, as torch.optim.RMSprop does.
template <typename RmspropLikeOptions>
void require_rmsprop_like(const char* optimizer, const RmspropLikeOptions& o) {
  require_lr(optimizer, o.lr);
  require_non_negative(optimizer, "epsilon value", o.eps);
  require_non_negative(optimizer, "momentum value", o.momentum);
  require_non_negative(optimizer, "weight_decay value", o.weight_decay);
  require_non_negative(optimizer, "alpha value", o.alpha);
}

}  // namespace checks
}  // namespace apexnpu::rt::optim
