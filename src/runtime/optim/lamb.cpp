#include "optim/lamb.h"

#include <cmath>

#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

FusedLamb::FusedLamb(const LambOptions& options, SegmentTable segments, std::size_t block_elements)
    : FusedOptimizer(options),
      segments_(std::move(segments)),
      plan_(segments_.segments(), {}, block_elements),
      partials_(plan_.pieces().size() * kLambSums),
      trust_ratios_(segments_.size(), 1.0f) {}

double FusedLamb::grad_sum_squares(const float* grads) {
  auto* sum_squares = APEXNPU_ISA_SELECT(sum_squares_range);
  detail::for_pieces(plan_, [&](std::size_t k, const WorkPiece& piece) {
    partials_[k] = sum_squares(grads, piece.begin, piece.end);
    return false;
  });
  double sum = 0.0;
  for (std::size_t k = 0; k < plan_.pieces().size(); ++k) sum += partials_[k];
  return sum;
}

bool FusedLamb::step(const FusedBuffers& b, const State& state, double global_grad_norm) {
  detail::check_buffers("Lamb", b);
  detail::check_state("Lamb", "exp_avg", state.exp_avg);
  detail::check_state("Lamb", "exp_avg_sq", state.exp_avg_sq);
  detail::check_extent("Lamb", b, segments_.extent());
  const LambOptions& o = options_;
  float grad_scale = 1.0f;
  if (o.use_global_grad_norm) {
    const double norm = global_grad_norm >= 0.0 ? global_grad_norm : std::sqrt(grad_sum_squares(b.grads));
    if (norm > 1.0) grad_scale = static_cast<float>(1.0 / norm);
  }
  const LambArgs args{{b.params, b.grads, state.exp_avg, state.exp_avg_sq, b.half_params},
                      moment_rates(o.beta1, o.beta2),
                      static_cast<float>(o.eps),
                      static_cast<float>(o.weight_decay)};
  auto* kernel = APEXNPU_ISA_SELECT(lamb_range);
  bool bad = false;
  if (o.adam) {
    const LambRangeArgs one_pass{{true, false, true}, grad_scale, static_cast<float>(o.lr)};
    bad = detail::for_pieces(plan_, [&](std::size_t, const WorkPiece& piece) {
      return kernel(args, one_pass, piece.begin, piece.end, nullptr);
    });
    for (float& r : trust_ratios_) r = 1.0f;
  } else {
    // Moments and norms, trust ratios, update: block by block (see work_plan.h).
    const LambRangeArgs moments{{true, true, false}, grad_scale, 0.0f};
    bad = detail::two_pass(
        plan_,
        [&](std::size_t k, const WorkPiece& piece) {
          kernel(args, moments, piece.begin, piece.end, &partials_[k * kLambSums]);
        },
        [&](const WorkBlock& block) {
          for (std::size_t s = block.first_group; s < block.end_group; ++s) {
            double pp = 0.0, uu = 0.0;
            for (std::size_t k = plan_.group_first(s); k < plan_.group_first(s + 1); ++k) {
              pp += partials_[k * kLambSums];
              uu += partials_[k * kLambSums + 1];
            }
            const double weight_norm = std::fmin(std::sqrt(pp), 10.0);
            const double update_norm = std::sqrt(uu);
            trust_ratios_[s] = weight_norm == 0.0 || update_norm == 0.0
                                   ? 1.0f
                                   : static_cast<float>(weight_norm / update_norm);
          }
        },
        [&](std::size_t, const WorkPiece& piece) {
          const LambRangeArgs apply{
              {false, false, true}, grad_scale, static_cast<float>(o.lr * trust_ratios_[piece.group])};
          return kernel(args, apply, piece.begin, piece.end, nullptr);
        });
  }
  return finish_step(b, bad);
}

void validate(const LambOptions& o) {
  checks::require_lr("Lamb", o.lr);
  checks::require_beta("Lamb", "beta parameter at index 0", o.beta1);
  checks::require_beta("Lamb", "beta parameter at index 1", o.beta2);
  checks::require_non_negative("Lamb", "epsilon value", o.eps);
  if (std::isnan(o.weight_decay))
    checks::invalid("Lamb", "weight_decay value", o.weight_decay, "must be a number");
}

}  // namespace apexnpu::rt::optim
