#include "optim/bert_adam.h"

#include <cmath>
#include <numbers>
#include <string>

#include "exec/error.h"
#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {

FusedBertAdam::FusedBertAdam(const BertAdamOptions& options, SegmentTable segments,
                             std::size_t block_elements)
    : FusedOptimizer(options),
      segments_(std::move(segments)),
      plan_(segments_.segments(), {}, block_elements),
      partials_(plan_.pieces().size()),
      grad_scales_(segments_.size()) {}

double FusedBertAdam::scheduled_lr() const {
  const BertAdamOptions& o = options_;
  if (o.t_total < 0.0) return o.lr;
  return o.lr * warmup_factor(o.schedule, static_cast<double>(steps_) / o.t_total, o.warmup);
}

bool FusedBertAdam::step(const FusedBuffers& b, const State& state) {
  detail::check_buffers("BertAdam", b);
  detail::check_state("BertAdam", "exp_avg", state.exp_avg);
  detail::check_state("BertAdam", "exp_avg_sq", state.exp_avg_sq);
  detail::check_extent("BertAdam", b, segments_.extent());
  const BertAdamOptions& o = options_;
  // BertAdam's update is LAMB's in its one-pass adam form (trust ratio 1, lr scheduled).
  const LambArgs args{{b.params, b.grads, state.exp_avg, state.exp_avg_sq, b.half_params},
                      moment_rates(o.b1, o.b2),
                      static_cast<float>(o.e),
                      static_cast<float>(o.weight_decay > 0.0 ? o.weight_decay : 0.0)};
  const float lr = static_cast<float>(scheduled_lr());
  auto adam_form = [lr](float grad_scale) { return LambRangeArgs{{true, false, true}, grad_scale, lr}; };
  auto* kernel = APEXNPU_ISA_SELECT(lamb_range);
  bool bad = false;
  if (o.max_grad_norm > 0.0) {
    // Gradient norms, clip factors, update: block by block (see work_plan.h), so the update
    // re-reads the gradients of small tensors from cache.
    auto* sum_squares = APEXNPU_ISA_SELECT(sum_squares_range);
    bad = detail::two_pass(
        plan_,
        [&](std::size_t k, const WorkPiece& piece) {
          partials_[k] = sum_squares(b.grads, piece.begin, piece.end);
        },
        [&](const WorkBlock& block) {
          for (std::size_t s = block.first_group; s < block.end_group; ++s) {
            double sum = 0.0;
            for (std::size_t k = plan_.group_first(s); k < plan_.group_first(s + 1); ++k) sum += partials_[k];
            const double clip = o.max_grad_norm / (std::sqrt(sum) + 1e-6);  // clip_grad_norm_'s rule
            grad_scales_[s] = static_cast<float>(clip < 1.0 ? clip : 1.0);
          }
        },
        [&](std::size_t, const WorkPiece& piece) {
          return kernel(args, adam_form(grad_scales_[piece.group]), piece.begin, piece.end, nullptr);
        });
  } else {
    const LambRangeArgs unclipped = adam_form(1.0f);
    bad = detail::for_chunks(b.numel, [&](std::size_t begin, std::size_t end) {
      return kernel(args, unclipped, begin, end, nullptr);
    });
  }
  return finish_step(b, bad);
}

WarmupSchedule parse_warmup_schedule(const std::string& name) {
  if (name == "warmup_linear") return WarmupSchedule::warmup_linear;
  if (name == "warmup_cosine") return WarmupSchedule::warmup_cosine;
  if (name == "warmup_constant") return WarmupSchedule::warmup_constant;
  if (name == "none") return WarmupSchedule::none;
  throw ArgumentError("BertAdam: invalid schedule parameter: '" + name +
                      "' (one of warmup_linear, warmup_cosine, warmup_constant, none)");
}

const char* to_string(WarmupSchedule schedule) noexcept {
  switch (schedule) {
    case WarmupSchedule::warmup_linear:
      return "warmup_linear";
    case WarmupSchedule::warmup_cosine:
      return "warmup_cosine";
    case WarmupSchedule::warmup_constant:
      return "warmup_constant";
    case WarmupSchedule::none:
      return "none";
  }
  return "?";
}

void validate(const BertAdamOptions& o) {
  checks::require_lr("BertAdam", o.lr);
  if (!((o.warmup >= 0.0 && o.warmup < 1.0) || o.warmup == -1.0)) {
    checks::invalid("BertAdam", "warmup", o.warmup, "must be in [0, 1) or -1");
  }
  checks::require_beta("BertAdam", "b1 parameter", o.b1);
  checks::require_beta("BertAdam", "b2 parameter", o.b2);
  checks::require_non_negative("BertAdam", "epsilon value", o.e);
  if (o.t_total == 0.0) {
    throw ArgumentError(
        "BertAdam: invalid t_total: 0 (a positive number of steps, or -1 for a "
        "constant learning rate)");
  }
  if (std::isnan(o.t_total) || std::isnan(o.max_grad_norm) || std::isnan(o.weight_decay)) {
    throw ArgumentError("BertAdam: t_total, max_grad_norm and weight_decay must not be NaN");
  }
}

// pytorch-pretrained-bert 0.6 schedules (progress = step / t_total, step counted from 0):
// linear decays to 0 at t_total, cosine is half a cosine period after the warmup, and a
// warmup of -1 means none.
double warmup_factor(WarmupSchedule schedule, double progress, double warmup) {
  warmup = warmup < 0.0 ? 0.0 : warmup;
  if (schedule == WarmupSchedule::none) return 1.0;
  if (progress < warmup) return progress / warmup;
  switch (schedule) {
    case WarmupSchedule::warmup_constant:
      return 1.0;
    case WarmupSchedule::warmup_linear: {
      const double f = (progress - 1.0) / (warmup - 1.0);
      return f > 0.0 ? f : 0.0;
    }
    case WarmupSchedule::warmup_cosine: {
      const double after = (progress - warmup) / (1.0 - warmup);
      return 0.5 * (1.0 + std::cos(std::numbers::pi * after));
    }
    case WarmupSchedule::none:
      break;
  }
  return 1.0;
}

}  // namespace apexnpu::rt::optim
