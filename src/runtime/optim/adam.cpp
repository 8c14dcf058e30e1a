#include "optim/adam.h"

#include <cmath>

#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

bool FusedAdam::step(const FusedBuffers& b, const State& state) {
  const AdamOptions& o = options_;
  const char* name = o.decoupled_weight_decay ? "AdamW" : "Adam";
  detail::check_buffers(name, b);
  detail::check_state(name, "exp_avg", state.exp_avg);
  detail::check_state(name, "exp_avg_sq", state.exp_avg_sq);
  if (o.amsgrad) detail::check_state(name, "max_exp_avg_sq", state.max_exp_avg_sq);
  const double t = static_cast<double>(steps_ + 1);
  const double bias_correction1 = 1.0 - std::pow(o.beta1, t);
  const double bias_correction2 = 1.0 - std::pow(o.beta2, t);
  const AdamArgs args{{b.params, b.grads, state.exp_avg, state.exp_avg_sq, b.half_params},
                      state.max_exp_avg_sq,
                      moment_rates(o.beta1, o.beta2),
                      static_cast<float>(o.lr / bias_correction1),
                      static_cast<float>(1.0 / std::sqrt(bias_correction2)),
                      static_cast<float>(o.eps),
                      static_cast<float>(o.decoupled_weight_decay ? 0.0 : o.weight_decay),
                      static_cast<float>(o.decoupled_weight_decay ? 1.0 - o.lr * o.weight_decay : 1.0),
                      o.amsgrad};
  return finish_step(b, detail::one_pass(b.numel, APEXNPU_ISA_SELECT(adam_range), args));
}

void validate(const AdamOptions& o) {
  checks::require_adam_like(o.decoupled_weight_decay ? "AdamW" : "Adam", o);
}

}  // namespace apexnpu::rt::optim
