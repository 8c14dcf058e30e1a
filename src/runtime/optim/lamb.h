#pragma once
// Fused LAMB: Lamb and NpuFusedLamb of Ascend apex (the LAMB paper as in cybertronai's
// pytorch-lamb): no bias correction; update = m / (sqrt(v) + eps) + weight_decay * p; per tensor
// of the segment table trust_ratio = min(||p||, 10) / ||update|| (1 when either norm is 0, and
// always 1 with adam=true); p -= lr * trust_ratio * update. use_global_grad_norm divides the
// gradients by the global gradient norm when it exceeds 1 (grads buffer left untouched).
// Two passes (moments + norms, then the update); one with adam=true; plus a gradient-norm read
// with use_global_grad_norm.
#include <span>
#include <vector>

#include "optim/fused_optimizer.h"
#include "tensor/segment_table.h"

namespace apexnpu::rt::optim {

struct LambOptions {  // Lamb / NpuFusedLamb (cybertronai LAMB as in Ascend apex)
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.0;
  bool adam = false;
  bool use_global_grad_norm = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &LambOptions::lr},
                      Field{"beta1", &LambOptions::beta1},
                      Field{"beta2", &LambOptions::beta2},
                      Field{"eps", &LambOptions::eps},
                      Field{"weight_decay", &LambOptions::weight_decay},
                      Field{"adam", &LambOptions::adam},
                      Field{"use_global_grad_norm", &LambOptions::use_global_grad_norm}};
  }
};
void validate(const LambOptions& o);  // throws ArgumentError naming what is wrong

class FusedLamb : public FusedOptimizer<LambOptions> {
 public:
  struct State {
    float* exp_avg = nullptr;
    float* exp_avg_sq = nullptr;
    static constexpr auto fields() {
      return std::array{Field{"exp_avg", &State::exp_avg}, Field{"exp_avg_sq", &State::exp_avg_sq}};
    }
  };
  // block_elements: the cache-blocking size of the two-pass path (see work_plan.h).
  FusedLamb(const LambOptions& options, SegmentTable segments, std::size_t block_elements = kBlockElements);

  // Sum of squared gradients over the segments: this buffer's share of the global norm when
  // one optimizer spans several combined buffers.
  double grad_sum_squares(const float* grads);
  // global_grad_norm < 0: computed from this buffer (when use_global_grad_norm).
  bool step(const FusedBuffers& buffers, const State& state, double global_grad_norm = -1.0);
  // The trust ratio each tensor got in the last step.
  std::span<const float> trust_ratios() const noexcept { return trust_ratios_; }

 private:
  SegmentTable segments_;
  WorkPlan plan_;
  std::vector<double> partials_;  // kLambSums per piece
  std::vector<float> trust_ratios_;
};

}  // namespace apexnpu::rt::optim
