#pragma once
// Hyper-parameters of the fused optimizers, with the defaults of Ascend's NpuFused* optimizers
// (their torch or reference counterparts' defaults), and their checks. A check failure throws ArgumentError naming the parameter, its value and
// the accepted range, as torch.optim / the reference implementations do with ValueError.
// They throw apexnpu::rt::ArgumentError (exec/error.h), which the binding maps to ValueError.
#include <cmath>
#include <limits>
#include <string>

namespace apexnpu::rt::optim {

// torch's `required` learning rate: NaN until the caller sets one.
inline constexpr double kRequired = std::numeric_limits<double>::quiet_NaN();

struct SgdOptions {  // torch.optim.SGD
  double lr = kRequired;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

struct AdamOptions {  // torch.optim.Adam (decoupled == false) and torch.optim.AdamW (true)
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
  bool decoupled_weight_decay = false;
};
AdamOptions adamw_defaults();  // AdamW: weight_decay 1e-2, decoupled

struct AdamPOptions {  // clovaai AdamP
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double delta = 0.1;
  double wd_ratio = 0.1;
  bool nesterov = false;
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
};

struct AdadeltaOptions {  // torch.optim.Adadelta
  double lr = 1.0;
  double rho = 0.9;
  double eps = 1e-6;
  double weight_decay = 0.0;
};

struct LambOptions {  // Lamb / NpuFusedLamb (cybertronai LAMB as in Ascend apex)
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.0;
  bool adam = false;
  bool use_global_grad_norm = false;
};

struct RmspropOptions {  // torch.optim.RMSprop
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
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
