#pragma once
// Fused RMSprop: torch.optim.RMSprop (momentum, centered), one pass per step.
#include "optim/fused_optimizer.h"
#include "optim/rmsprop_state.h"

namespace apexnpu::rt::optim {

struct RmspropOptions {  // torch.optim.RMSprop
  double lr = 1e-2;
  double alpha = 0.99;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double momentum = 0.0;
  bool centered = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &RmspropOptions::lr},
                      Field{"alpha", &RmspropOptions::alpha},
                      Field{"eps", &RmspropOptions::eps},
                      Field{"weight_decay", &RmspropOptions::weight_decay},
                      Field{"momentum", &RmspropOptions::momentum},
                      Field{"centered", &RmspropOptions::centered}};
  }
};
void validate(const RmspropOptions& o);  // throws ArgumentError naming what is wrong

class FusedRmsprop : public FusedOptimizer<RmspropOptions> {
 public:
  using State = RmspropState;
  explicit FusedRmsprop(const RmspropOptions& options) : FusedOptimizer(options) {}
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
