#include "optim/rmsprop_tf.h"

#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

bool FusedRmspropTf::step(const FusedBuffers& b, const State& state) {
  detail::check_buffers("RMSpropTF", b);
  const RmspropTfOptions& o = options_;
  const bool has_momentum = o.momentum > 0.0;
  detail::check_state("RMSpropTF", "square_avg", state.square_avg);
  if (o.centered) detail::check_state("RMSpropTF", "grad_avg", state.grad_avg);
  if (has_momentum) detail::check_state("RMSpropTF", "momentum_buffer", state.momentum_buffer);
  const bool decoupled = o.decoupled_decay && o.weight_decay != 0.0;
  const RmspropTfArgs args{b.params, b.grads, state.square_avg, state.grad_avg,
                           state.momentum_buffer, b.half_params,
                           static_cast<float>(o.lr), static_cast<float>(1.0 - o.alpha),
                           static_cast<float>(o.eps),
                           static_cast<float>(decoupled ? 0.0 : o.weight_decay),
                           static_cast<float>(decoupled ? 1.0 - o.lr * o.weight_decay : 1.0),
                           static_cast<float>(o.momentum), o.centered, has_momentum,
                           o.lr_in_momentum};
  auto* kernel = APEXNPU_ISA_SELECT(rmsprop_tf_range);
  const bool bad = detail::for_chunks(b.numel, [&](std::size_t begin, std::size_t end) {
    return kernel(args, begin, end);
  });
  ++steps_;
  return detail::report(b, bad);
}

}  // namespace apexnpu::rt::optim
