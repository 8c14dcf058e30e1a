#pragma once
// Fused Adadelta: torch.optim.Adadelta, one pass per step.
#include "optim/fused_optimizer.h"

namespace apexnpu::rt::optim {

struct AdadeltaOptions {  // torch.optim.Adadelta
  double lr = 1.0;
  double rho = 0.9;
  double eps = 1e-6;
  double weight_decay = 0.0;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &AdadeltaOptions::lr}, Field{"rho", &AdadeltaOptions::rho},
                      Field{"eps", &AdadeltaOptions::eps},
                      Field{"weight_decay", &AdadeltaOptions::weight_decay}};
  }
};
void validate(const AdadeltaOptions& o);  // throws ArgumentError naming what is wrong

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
