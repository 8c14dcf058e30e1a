#pragma once
// Fused RMSprop: torch.optim.RMSprop (momentum, centered), one pass per step.
#include "optim/fused_optimizer.h"
#include "optim/rmsprop_state.h"

namespace apexnpu::rt::optim {

class FusedRmsprop : public FusedOptimizer<RmspropOptions> {
 public:
  using State = RmspropState;
  explicit FusedRmsprop(const RmspropOptions& options) : FusedOptimizer(options) {}
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
