#pragma once
// Fused RMSpropTF: timm's RMSpropTF (TensorFlow's RMSprop: eps inside the square root, the
// square average starting at one, decoupled_decay, lr_in_momentum), one pass per step.
// The caller initialises square_avg to kSquareAvgInit.
#include "optim/fused_optimizer.h"
#include "optim/rmsprop_state.h"

namespace apexnpu::rt::optim {

struct RmspropTfOptions {  // timm RMSpropTF
  double lr = 1e-2;
  double alpha = 0.9;
  double eps = 1e-10;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  bool decoupled_decay = false;
  bool lr_in_momentum = true;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &RmspropTfOptions::lr},
                      Field{"alpha", &RmspropTfOptions::alpha},
                      Field{"eps", &RmspropTfOptions::eps},
                      Field{"weight_decay", &RmspropTfOptions::weight_decay},
                      Field{"momentum", &RmspropTfOptions::momentum},
                      Field{"centered", &RmspropTfOptions::centered},
                      Field{"decoupled_decay", &RmspropTfOptions::decoupled_decay},
                      Field{"lr_in_momentum", &RmspropTfOptions::lr_in_momentum}};
  }
};
void validate(const RmspropTfOptions& o);  // throws ArgumentError naming what is wrong

class FusedRmspropTf : public FusedOptimizer<RmspropTfOptions> {
 public:
  static constexpr float kSquareAvgInit = 1.0f;
  using State = RmspropState;  // square_avg starts at kSquareAvgInit
  explicit FusedRmspropTf(const RmspropTfOptions& options) : FusedOptimizer(options) {}
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
