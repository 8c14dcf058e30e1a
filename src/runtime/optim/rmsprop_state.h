#pragma once
// The state both RMSprop variants (FusedRmsprop, FusedRmspropTf) keep, and its check.
#include "optim/fused_optimizer.h"
#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

struct RmspropState {
  float* square_avg = nullptr;
  float* grad_avg = nullptr;         // needed when centered
  float* momentum_buffer = nullptr;  // needed when momentum > 0
  static constexpr auto fields() {
    return std::array{Field{"square_avg", &RmspropState::square_avg},
                      Field{"grad_avg", &RmspropState::grad_avg},
                      Field{"momentum_buffer", &RmspropState::momentum_buffer}};
  }
};

// The kernels' buffers of one step; ArgumentError naming the first buffer these options need
// that is null.
inline RmspropBuffers rmsprop_buffers(const char* optimizer, const FusedBuffers& b, const RmspropState& state,
                                      bool centered, bool has_momentum) {
  detail::check_buffers(optimizer, b);
  detail::check_state(optimizer, "square_avg", state.square_avg);
  if (centered) detail::check_state(optimizer, "grad_avg", state.grad_avg);
  if (has_momentum) detail::check_state(optimizer, "momentum_buffer", state.momentum_buffer);
  return {b.params, b.grads, state.square_avg, state.grad_avg, state.momentum_buffer, b.half_params};
}

}  // namespace apexnpu::rt::optim
