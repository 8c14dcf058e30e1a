#pragma once
// Fused Adam and AdamW: torch.optim.Adam / AdamW (amsgrad, bias correction, eps added after the
// square root of the corrected second moment), one pass per step. AdamW is Adam with
// decoupled_weight_decay (p *= 1 - lr * weight_decay); adamw_defaults() gives its defaults.
#include "optim/fused_optimizer.h"

namespace apexnpu::rt::optim {

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
