#include "optim/sgd.h"

#include "exec/error.h"
#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

bool FusedSgd::step(const FusedBuffers& b, const State& state) {
  detail::check_buffers("SGD", b);
  const SgdOptions& o = options_;
  const bool has_momentum = o.momentum != 0.0;
  if (has_momentum) detail::check_state("SGD", "momentum_buffer", state.momentum_buffer);
  const SgdArgs args{b.params,
                     b.grads,
                     state.momentum_buffer,
                     b.half_params,
                     static_cast<float>(o.lr),
                     static_cast<float>(o.momentum),
                     static_cast<float>(1.0 - o.dampening),
                     static_cast<float>(o.weight_decay),
                     has_momentum,
                     steps_ == 0,
                     o.nesterov};
  return finish_step(b, detail::one_pass(b.numel, APEXNPU_ISA_SELECT(sgd_range), args));
}

void validate(const SgdOptions& o) {
  checks::require_lr("SGD", o.lr);
  checks::require_non_negative("SGD", "momentum value", o.momentum);
  checks::require_non_negative("SGD", "weight_decay value", o.weight_decay);
  if (o.nesterov && (!(o.momentum > 0.0) || o.dampening != 0.0)) {
    throw ArgumentError("SGD: Nesterov momentum requires a momentum and zero dampening (momentum=" +
                        checks::number(o.momentum) + ", dampening=" + checks::number(o.dampening) + ")");
  }
}

}  // namespace apexnpu::rt::optim
