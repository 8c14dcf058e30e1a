#include "optim/rmsprop.h"

#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

bool FusedRmsprop::step(const FusedBuffers& b, const State& state) {
  const RmspropOptions& o = options_;
  const bool has_momentum = o.momentum > 0.0;
  const RmspropArgs args{rmsprop_buffers("RMSprop", b, state, o.centered, has_momentum),
                         static_cast<float>(o.lr),
                         static_cast<float>(o.alpha),
                         static_cast<float>(1.0 - o.alpha),
                         static_cast<float>(o.eps),
                         static_cast<float>(o.weight_decay),
                         static_cast<float>(o.momentum),
                         o.centered,
                         has_momentum};
  return finish_step(b, detail::one_pass(b.numel, APEXNPU_ISA_SELECT(rmsprop_range), args));
}

void validate(const RmspropOptions& o) { checks::require_rmsprop_like("RMSprop", o); }

}  // namespace apexnpu::rt::optim
