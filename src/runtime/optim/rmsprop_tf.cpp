#include "optim/rmsprop_tf.h"

#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

bool FusedRmspropTf::step(const FusedBuffers& b, const State& state) {
  const RmspropTfOptions& o = options_;
  const bool has_momentum = o.momentum > 0.0;
  const bool decoupled = o.decoupled_decay && o.weight_decay != 0.0;
  const RmspropTfArgs args{rmsprop_buffers("RMSpropTF", b, state, o.centered, has_momentum),
                           static_cast<float>(o.lr),
                           static_cast<float>(1.0 - o.alpha),
                           static_cast<float>(o.eps),
                           static_cast<float>(decoupled ? 0.0 : o.weight_decay),
                           static_cast<float>(decoupled ? 1.0 - o.lr * o.weight_decay : 1.0),
                           static_cast<float>(o.momentum),
                           o.centered,
                           has_momentum,
                           o.lr_in_momentum};
  return finish_step(b, detail::one_pass(b.numel, APEXNPU_ISA_SELECT(rmsprop_tf_range), args));
}

void validate(const RmspropTfOptions& o) { checks::require_rmsprop_like("RMSpropTF", o); }

}  // namespace apexnpu::rt::optim
