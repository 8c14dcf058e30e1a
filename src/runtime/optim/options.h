#pragma once
// Hyper-parameters of the fused optimizers, with the defaults of Ascend's NpuFused* optimizers
// (their torch or reference counterparts' defaults), and their checks. A check failure throws
// apexnpu::rt::ArgumentError (exec/error.h; the binding's ValueError) naming the parameter, its
// value and the accepted range, as torch.optim and the reference implementations do.
// Each struct lists its fields() once, by their Python-side names (the binding's option keys).
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "optim/fields.h"

namespace apexnpu::rt::optim {

// torch's `required` learning rate: NaN until the caller sets one.
inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

struct SgdOptions {  // torch.optim.SGD
  double lr = kRequired;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &SgdOptions::lr}, Field{"momentum", &SgdOptions::momentum},
                      Field{"dampening", &SgdOptions::dampening},
                      Field{"weight_decay", &SgdOptions::weight_decay},
                      Field{"nesterov", &SgdOptions::nesterov}};
  }
};

struct AdamOptions {  // torch.optim.Adam (decoupled == false) and torch.optim.AdamW (true)
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
  bool decoupled_weight_decay = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &AdamOptions::lr},
                      Field{"beta1", &AdamOptions::beta1},
                      Field{"beta2", &AdamOptions::beta2},
                      Field{"eps", &AdamOptions::eps},
                      Field{"weight_decay", &AdamOptions::weight_decay},
                      Field{"amsgrad", &AdamOptions::amsgrad},
                      Field{"decoupled_weight_decay", &AdamOptions::decoupled_weight_decay}};
  }
};
// AdamW: torch.optim.AdamW's weight_decay 1e-2, decoupled.
constexpr AdamOptions adamw_defaults() {
  AdamOptions o;
  o.weight_decay = 1e-2;
  o.decoupled_weight_decay = true;
  return o;
}

struct AdamPOptions {  // clovaai AdamP
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double delta = 0.1;
  double wd_ratio = 0.1;
  bool nesterov = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &AdamPOptions::lr},
                      Field{"beta1", &AdamPOptions::beta1},
                      Field{"beta2", &AdamPOptions::beta2},
                      Field{"eps", &AdamPOptions::eps},
                      Field{"weight_decay", &AdamPOptions::weight_decay},
                      Field{"delta", &AdamPOptions::delta},
                      Field{"wd_ratio", &AdamPOptions::wd_ratio},
                      Field{"nesterov", &AdamPOptions::nesterov}};
  }
};

enum class WarmupSchedule { warmup_linear, warmup_cosine, warmup_constant, none };
WarmupSchedule parse_warmup_schedule(const std::string& name);  // throws on unknown names
const char* to_string(WarmupSchedule schedule) noexcept;

struct BertAdamOptions {  // HuggingFace pytorch-pretrained-bert BertAdam
  double lr = kRequired;
  double warmup = -1.0;
  double t_total = -1.0;
  WarmupSchedule schedule = WarmupSchedule::warmup_linear;
  double b1 = 0.9;
  double b2 = 0.99;
  double e = 1e-6;
  double weight_decay = 0.01;
  double max_grad_norm = -1.0;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &BertAdamOptions::lr},
                      Field{"warmup", &BertAdamOptions::warmup},
                      Field{"t_total", &BertAdamOptions::t_total},
                      Field{"schedule", &BertAdamOptions::schedule},
                      Field{"b1", &BertAdamOptions::b1},
                      Field{"b2", &BertAdamOptions::b2},
                      Field{"e", &BertAdamOptions::e},
                      Field{"weight_decay", &BertAdamOptions::weight_decay},
                      Field{"max_grad_norm", &BertAdamOptions::max_grad_norm}};
  }
};

struct AdadeltaOptions {  // torch.optim.Adadelta
  double lr = 1.0;
  double rho = 0.9;
  double eps = 1e-6;
  double weight_decay = 0.0;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &AdadeltaOptions::lr}, Field{"rho", &AdadeltaOptions::rho},
                      Field{"eps", &AdadeltaOptions::eps},
                      Field{"weight_decay", &AdadeltaOptions::weight_decay}};
  }
};

struct LambOptions {  // Lamb / NpuFusedLamb (cybertronai LAMB as in Ascend apex)
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.0;
  bool adam = false;
  bool use_global_grad_norm = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &LambOptions::lr},
                      Field{"beta1", &LambOptions::beta1},
                      Field{"beta2", &LambOptions::beta2},
                      Field{"eps", &LambOptions::eps},
                      Field{"weight_decay", &LambOptions::weight_decay},
                      Field{"adam", &LambOptions::adam},
                      Field{"use_global_grad_norm", &LambOptions::use_global_grad_norm}};
  }
};

struct RmspropOptions {  // torch.optim.RMSprop
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &RmspropOptions::lr},
                      Field{"alpha", &RmspropOptions::alpha},
                      Field{"eps", &RmspropOptions::eps},
                      Field{"weight_decay", &RmspropOptions::weight_decay},
                      Field{"momentum", &RmspropOptions::momentum},
                      Field{"centered", &RmspropOptions::centered}};
  }
};

struct RmspropTfOptions {  // timm RMSpropTF
  double lr = 1e-2;
  double alpha = 0.9;
  double eps = 1e-10;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool decoupled_decay = false;
  bool lr_in_momentum = true;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &RmspropTfOptions::lr},
                      Field{"alpha", &RmspropTfOptions::alpha},
                      Field{"eps", &RmspropTfOptions::eps},
                      Field{"weight_decay", &RmspropTfOptions::weight_decay},
                      Field{"momentum", &RmspropTfOptions::momentum},
                      Field{"centered", &RmspropTfOptions::centered},
                      Field{"decoupled_decay", &RmspropTfOptions::decoupled_decay},
                      Field{"lr_in_momentum", &RmspropTfOptions::lr_in_momentum}};
  }
};

void validate(const SgdOptions& o);
void validate(const AdamOptions& o);
void validate(const AdamPOptions& o);
void validate(const BertAdamOptions& o);
void validate(const AdadeltaOptions& o);
void validate(const LambOptions& o);
void validate(const RmspropOptions& o);
void validate(const RmspropTfOptions& o);

// BertAdam's learning-rate multiplier at `progress` = step / t_total (step counted from 0).
double warmup_factor(WarmupSchedule schedule, double progress, double warmup);

}  // namespace apexnpu::rt::optim
