#include "optim/options.h"

#include <charconv>
#include <numbers>

#include "exec/error.h"

namespace apexnpu::rt::optim {
namespace {

std::string number(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::string("?");
}

[[noreturn]] void invalid(const char* optimizer, const char* what, double value, const char* rule) {
  throw ArgumentError(std::string(optimizer) + ": invalid " + what + ": " + number(value) + " (" + rule +
                      ")");
}

// NaN fails every comparison, so each check is written as "accept when in range".
void require_lr(const char* opt, double lr) {
  if (std::isnan(lr)) {
    throw ArgumentError(std::string(opt) + ": lr is required (no default learning rate)");
  }
  if (!(lr >= 0.0)) invalid(opt, "learning rate", lr, "lr must be >= 0");
}
void require_non_negative(const char* opt, const char* what, double v) {
  if (!(v >= 0.0)) invalid(opt, what, v, "must be >= 0");
}
void require_beta(const char* opt, const char* what, double v) {
  if (!(v >= 0.0 && v < 1.0)) invalid(opt, what, v, "must be in [0, 1)");
}

// Adam and AdamP check the same five hyper-parameters, as torch.optim.Adam does.
template <typename AdamLikeOptions>
void require_adam_like(const char* opt, const AdamLikeOptions& o) {
  require_lr(opt, o.lr);
  require_non_negative(opt, "epsilon value", o.eps);
  require_beta(opt, "beta parameter at index 0", o.beta1);
  require_beta(opt, "beta parameter at index 1", o.beta2);
  require_non_negative(opt, "weight_decay value", o.weight_decay);
}

// RMSprop and RMSpropTF check the same five, as torch.optim.RMSprop does.
template <typename RmspropLikeOptions>
void require_rmsprop_like(const char* opt, const RmspropLikeOptions& o) {
  require_lr(opt, o.lr);
  require_non_negative(opt, "epsilon value", o.eps);
  require_non_negative(opt, "momentum value", o.momentum);
  require_non_negative(opt, "weight_decay value", o.weight_decay);
  require_non_negative(opt, "alpha value", o.alpha);
}

}  // namespace

WarmupSchedule parse_warmup_schedule(const std::string& name) {
  if (name == "warmup_linear") return WarmupSchedule::warmup_linear;
  if (name == "warmup_cosine") return WarmupSchedule::warmup_cosine;
  if (name == "warmup_constant") return WarmupSchedule::warmup_constant;
  if (name == "none") return WarmupSchedule::none;
  throw ArgumentError("BertAdam: invalid schedule parameter: '" + name +
                      "' (one of warmup_linear, warmup_cosine, warmup_constant, none)");
}

const char* to_string(WarmupSchedule schedule) noexcept {
  switch (schedule) {
    case WarmupSchedule::warmup_linear:
      return "warmup_linear";
    case WarmupSchedule::warmup_cosine:
      return "warmup_cosine";
    case WarmupSchedule::warmup_constant:
      return "warmup_constant";
    case WarmupSchedule::none:
      return "none";
  }
  return "?";
}

void validate(const SgdOptions& o) {
  require_lr("SGD", o.lr);
  require_non_negative("SGD", "momentum value", o.momentum);
  require_non_negative("SGD", "weight_decay value", o.weight_decay);
  if (o.nesterov && (!(o.momentum > 0.0) || o.dampening != 0.0)) {
    throw ArgumentError("SGD: Nesterov momentum requires a momentum and zero dampening (momentum=" +
                        number(o.momentum) + ", dampening=" + number(o.dampening) + ")");
  }
}

void validate(const AdamOptions& o) { require_adam_like(o.decoupled_weight_decay ? "AdamW" : "Adam", o); }

void validate(const AdamPOptions& o) {
  require_adam_like("AdamP", o);
  require_non_negative("AdamP", "delta value", o.delta);
  require_non_negative("AdamP", "wd_ratio value", o.wd_ratio);
}

void validate(const BertAdamOptions& o) {
  require_lr("BertAdam", o.lr);
  if (!((o.warmup >= 0.0 && o.warmup < 1.0) || o.warmup == -1.0)) {
    invalid("BertAdam", "warmup", o.warmup, "must be in [0, 1) or -1");
  }
  require_beta("BertAdam", "b1 parameter", o.b1);
  require_beta("BertAdam", "b2 parameter", o.b2);
  require_non_negative("BertAdam", "epsilon value", o.e);
  if (o.t_total == 0.0) {
    throw ArgumentError(
        "BertAdam: invalid t_total: 0 (a positive number of steps, or -1 for a "
        "constant learning rate)");
  }
  if (std::isnan(o.t_total) || std::isnan(o.max_grad_norm) || std::isnan(o.weight_decay)) {
    throw ArgumentError("BertAdam: t_total, max_grad_norm and weight_decay must not be NaN");
  }
}

void validate(const AdadeltaOptions& o) {
  require_lr("Adadelta", o.lr);
  if (!(o.rho >= 0.0 && o.rho <= 1.0)) invalid("Adadelta", "rho value", o.rho, "must be in [0, 1]");
  require_non_negative("Adadelta", "epsilon value", o.eps);
  require_non_negative("Adadelta", "weight_decay value", o.weight_decay);
}

void validate(const LambOptions& o) {
  require_lr("Lamb", o.lr);
  require_beta("Lamb", "beta parameter at index 0", o.beta1);
  require_beta("Lamb", "beta parameter at index 1", o.beta2);
  require_non_negative("Lamb", "epsilon value", o.eps);
  if (std::isnan(o.weight_decay)) invalid("Lamb", "weight_decay value", o.weight_decay, "must be a number");
}

void validate(const RmspropOptions& o) { require_rmsprop_like("RMSprop", o); }

void validate(const RmspropTfOptions& o) { require_rmsprop_like("RMSpropTF", o); }

// pytorch-pretrained-bert 0.6 schedules (progress = step / t_total, step counted from 0):
// linear decays to 0 at t_total, cosine is half a cosine period after the warmup, and a
// warmup of -1 means none.
double warmup_factor(WarmupSchedule schedule, double progress, double warmup) {
  warmup = warmup < 0.0 ? 0.0 : warmup;
  if (schedule == WarmupSchedule::none) return 1.0;
  if (progress < warmup) return progress / warmup;
  switch (schedule) {
    case WarmupSchedule::warmup_constant:
      return 1.0;
    case WarmupSchedule::warmup_linear: {
      const double f = (progress - 1.0) / (warmup - 1.0);
      return f > 0.0 ? f : 0.0;
    }
    case WarmupSchedule::warmup_cosine: {
      const double after = (progress - warmup) / (1.0 - warmup);
      return 0.5 * (1.0 + std::cos(std::numbers::pi * after));
    }
    case WarmupSchedule::none:
      break;
  }
  return 1.0;
}

}  // namespace apexnpu::rt::optim
