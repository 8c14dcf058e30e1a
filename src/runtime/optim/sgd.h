#pragma once
// Fused SGD: torch.optim.SGD (momentum, dampening, nesterov, weight decay), one pass per step.
// The first step with momentum sets the momentum buffer to the gradient, as torch does.
#include "optim/fused_optimizer.h"

namespace apexnpu::rt::optim {

struct SgdOptions {  // torch.optim.SGD
  double lr = kRequired;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &SgdOptions::lr}, Field{"momentum", &SgdOptions::momentum},
                      Field{"dampening", &SgdOptions::dampening},
                      Field{"weight_decay", &SgdOptions::weight_decay},
                      Field{"nesterov", &SgdOptions::nesterov}};
  }
};
void validate(const SgdOptions& o);  // throws ArgumentError naming what is wrong

class FusedSgd : public FusedOptimizer<SgdOptions> {
 public:
  struct State {
    float* momentum_buffer = nullptr;  // needed when momentum != 0
    static constexpr auto fields() { return std::array{Field{"momentum_buffer", &State::momentum_buffer}}; }
  };
  explicit FusedSgd(const SgdOptions& options) : FusedOptimizer(options) {}
  // One step; true if a non-finite param or an fp16 overflow raised the float status.
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
