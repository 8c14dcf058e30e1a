#pragma once
// Fused Adadelta: torch.optim.Adadelta, one pass per step.
#include "optim/fused_optimizer.h"

namespace apexnpu::rt::optim {

class FusedAdadelta : public FusedOptimizer<AdadeltaOptions> {
 public:
  struct State {
    float* square_avg = nullptr;
    float* acc_delta = nullptr;
    static constexpr auto fields() {
      return std::array{Field{"square_avg", &State::square_avg}, Field{"acc_delta", &State::acc_delta}};
    }
  };
  explicit FusedAdadelta(const AdadeltaOptions& options) : FusedOptimizer(options) {}
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
