#pragma once
// Fused AdamP (Heo et al., "AdamP: Slowing Down the Slowdown for Momentum Optimizers on
// Scale-invariant Weights", as in clovaai/AdamP): Adam with bias correction, optional nesterov,
// and for every tensor of two or more dimensions a projection that removes the radial part of
// the update when the gradient is nearly orthogonal to the weight:
//   per channel (rows = size of dim 0): if max_rows |cos(g_row, p_row)| < delta / sqrt(row length)
//     perturb_row -= p_row * <p_row, perturb_row> / (||p_row|| + eps)^2, wd scaled by wd_ratio;
//   else for the whole tensor: the same test with delta / sqrt(numel) and the same projection.
// cos(x, y) = x.y / (max(||x||, eps) max(||y||, eps)) (torch.nn.functional.cosine_similarity).
// Then p = p * (1 - lr * weight_decay * wd_ratio) - lr / bias_correction1 * perturb.
// Tensors of 0 or 1 dimension: one pass. Others: two (moments + per-row sums, then the update).
#include <cstdint>
#include <span>
#include <vector>

#include "optim/fused_optimizer.h"
#include "tensor/segment_table.h"

namespace apexnpu::rt::optim {

struct AdamPOptions {  // clovaai AdamP
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double delta = 0.1;
  double wd_ratio = 0.1;
  bool nesterov = false;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &AdamPOptions::lr},
                      Field{"beta1", &AdamPOptions::beta1},
                      Field{"beta2", &AdamPOptions::beta2},
                      Field{"eps", &AdamPOptions::eps},
                      Field{"weight_decay", &AdamPOptions::weight_decay},
                      Field{"delta", &AdamPOptions::delta},
                      Field{"wd_ratio", &AdamPOptions::wd_ratio},
                      Field{"nesterov", &AdamPOptions::nesterov}};
  }
};
void validate(const AdamPOptions& o);  // throws ArgumentError naming what is wrong

class FusedAdamP : public FusedOptimizer<AdamPOptions> {
 public:
  struct State {
    float* exp_avg = nullptr;
    float* exp_avg_sq = nullptr;
    static constexpr auto fields() {
      return std::array{Field{"exp_avg", &State::exp_avg}, Field{"exp_avg_sq", &State::exp_avg_sq}};
    }
  };
  enum class Projection : std::uint8_t { none, channel, layer };

  // rows[i]: tensor i's size along dim 0 if it has two or more dimensions, else 0 (no
  // projection). numel must be a multiple of rows.
  // block_elements: the cache-blocking size of the two-pass path (see work_plan.h).
  FusedAdamP(const AdamPOptions& options, SegmentTable segments, std::vector<std::size_t> rows,
             std::size_t block_elements = kBlockElements);
  bool step(const FusedBuffers& buffers, const State& state);
  // The projection each tensor got in the last step.
  std::span<const Projection> projections() const noexcept { return projections_; }

 private:
  // Sums the rows of tensor s, picks its projection, sets its rows' coefficients.
  void decide_projection(std::size_t s);

  SegmentTable segments_;
  std::vector<std::size_t> rows_;
  std::vector<std::size_t> first_row_;  // per segment, its first row group (projected ones)
  std::vector<std::size_t> row_owner_;  // per row group, its segment
  WorkPlan direct_plan_;                // tensors without projection, as groups
  WorkPlan row_plan_;                   // rows of the projected tensors, as groups
  std::vector<double> partials_;        // kAdamPSums per row piece
  std::vector<double> row_sums_;        // kAdamPSums per row
  std::vector<float> row_projection_;   // per row: the coefficient of p removed from perturb
  std::vector<float> row_decay_;        // per row: its tensor's weight-decay factor
  std::vector<Projection> projections_;
};

}  // namespace apexnpu::rt::optim
