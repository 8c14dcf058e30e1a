#include "optim/adadelta.h"

#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

bool FusedAdadelta::step(const FusedBuffers& b, const State& state) {
  detail::check_buffers("Adadelta", b);
  detail::check_state("Adadelta", "square_avg", state.square_avg);
  detail::check_state("Adadelta", "acc_delta", state.acc_delta);
  const AdadeltaOptions& o = options_;
  const AdadeltaArgs args{b.params,
                          b.grads,
                          state.square_avg,
                          state.acc_delta,
                          b.half_params,
                          static_cast<float>(o.lr),
                          static_cast<float>(o.rho),
                          static_cast<float>(1.0 - o.rho),
                          static_cast<float>(o.eps),
                          static_cast<float>(o.weight_decay)};
  return finish_step(b, detail::one_pass(b.numel, APEXNPU_ISA_SELECT(adadelta_range), args));
}

void validate(const AdadeltaOptions& o) {
  checks::require_lr("Adadelta", o.lr);
  if (!(o.rho >= 0.0 && o.rho <= 1.0)) checks::invalid("Adadelta", "rho value", o.rho, "must be in [0, 1]");
  checks::require_non_negative("Adadelta", "epsilon value", o.eps);
  checks::require_non_negative("Adadelta", "weight_decay value", o.weight_decay);
}

}  // namespace apexnpu::rt::optim
