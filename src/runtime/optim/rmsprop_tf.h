#pragma once
// Fused RMSpropTF: timm's RMSpropTF (TensorFlow's RMSprop: eps inside the square root, the
// square average starting at one, decoupled_decay, lr_in_momentum), one pass per step.
// The caller initialises square_avg to kSquareAvgInit.
#include "optim/fused_optimizer.h"
#include "optim/rmsprop_state.h"

namespace apexnpu::rt::optim {

class FusedRmspropTf : public FusedOptimizer<RmspropTfOptions> {
 public:
  static constexpr float kSquareAvgInit = 1.0f;
  using State = RmspropState;  // square_avg starts at kSquareAvgInit
  explicit FusedRmspropTf(const RmspropTfOptions& options) : FusedOptimizer(options) {}
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
