#pragma once
// Fused RMSprop: torch.optim.RMSprop (momentum, centered), one pass per step.
#include "optim/fused_optimizer.h"

namespace apexnpu::rt::optim {

class FusedRmsprop : public FusedOptimizer<RmspropOptions> {
 public:
  struct State {
    float* square_avg = nullptr;
    float* grad_avg = nullptr;         // needed when centered
    float* momentum_buffer = nullptr;  // needed when momentum > 0
  };
  explicit FusedRmsprop(const RmspropOptions& options) : FusedOptimizer(options) {}
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
