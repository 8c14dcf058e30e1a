#pragma once
// Fused Adam and AdamW: torch.optim.Adam / AdamW (amsgrad, bias correction, eps added after the
// square root of the corrected second moment), one pass per step. AdamW is Adam with
// decoupled_weight_decay (p *= 1 - lr * weight_decay); adamw_defaults() gives its defaults.
#include "optim/fused_optimizer.h"

namespace apexnpu::rt::optim {

struct AdamOptions {  // torch.optim.Adam (decoupled == false) and torch.optim.AdamW (true)
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  bool amsgrad = false;
  bool decoupled_weight_decay = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &AdamOptions::lr},
                      Field{"beta1", &AdamOptions::beta1},
                      Field{"beta2", &AdamOptions::beta2},
                      Field{"eps", &AdamOptions::eps},
                      Field{"weight_decay", &AdamOptions::weight_decay},
                      Field{"amsgrad", &AdamOptions::amsgrad},
                      Field{"decoupled_weight_decay", &AdamOptions::decoupled_weight_decay}};
  }
};
// AdamW: torch.optim.AdamW's weight_decay 1e-2, decoupled.
constexpr AdamOptions adamw_defaults() {
  AdamOptions o;
  o.weight_decay = 1e-2;
  o.decoupled_weight_decay = true;
  return o;
}
void validate(const AdamOptions& o);  // throws ArgumentError naming what is wrong

class FusedAdam : public FusedOptimizer<AdamOptions> {
 public:
  struct State {
    float* exp_avg = nullptr;
    float* exp_avg_sq = nullptr;
    float* max_exp_avg_sq = nullptr;  // needed with amsgrad
    static constexpr auto fields() {
      return std::array{Field{"exp_avg", &State::exp_avg}, Field{"exp_avg_sq", &State::exp_avg_sq},
                        Field{"max_exp_avg_sq", &State::max_exp_avg_sq}};
    }
  };
  explicit FusedAdam(const AdamOptions& options) : FusedOptimizer(options) {}
  bool step(const FusedBuffers& buffers, const State& state);
};

}  // namespace apexnpu::rt::optim
