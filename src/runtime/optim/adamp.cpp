#include "optim/adamp.h"

#include <cmath>

#include "exec/error.h"
#include "optim/kernel_args.h"

namespace apexnpu::rt::optim {
namespace {

std::vector<Segment> unprojected(const SegmentTable& segments, const std::vector<std::size_t>& rows) {
  std::vector<Segment> out;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    if (rows[s] == 0) out.push_back(segments[s]);
  }
  return out;
}

std::vector<std::size_t> row_owners(const std::vector<std::size_t>& rows) {
  std::vector<std::size_t> out;
  for (std::size_t s = 0; s < rows.size(); ++s) out.insert(out.end(), rows[s], s);
  return out;
}

std::vector<Segment> row_ranges(const SegmentTable& segments, const std::vector<std::size_t>& rows) {
  std::vector<Segment> out;
  for (std::size_t s = 0; s < segments.size(); ++s) {
    if (rows[s] == 0) continue;
    const std::size_t length = segments[s].numel / rows[s];
    for (std::size_t r = 0; r < rows[s]; ++r) out.push_back({segments[s].offset + r * length, length});
  }
  return out;
}

const std::vector<std::size_t>& checked_rows(const SegmentTable& segments,
                                             const std::vector<std::size_t>& rows) {
  if (rows.size() != segments.size()) {
    throw ArgumentError(concat("AdamP: got ", rows.size(), " row counts for ", segments.size(),
                               " tensors (one per tensor: its dim 0, or 0 below two dimensions)"));
  }
  for (std::size_t s = 0; s < rows.size(); ++s) {
    if (rows[s] != 0 && segments[s].numel % rows[s] != 0) {
      throw ArgumentError(concat("AdamP: tensor ", s, " has ", segments[s].numel,
                                 " elements, not a multiple of its ", rows[s], " rows"));
    }
  }
  return rows;
}

// |x.y| / (max(||x||, eps) max(||y||, eps)), from the sums x.y, x.x, y.y.
double abs_cosine(double xy, double xx, double yy, double eps) {
  return std::fabs(xy) / (std::fmax(std::sqrt(xx), eps) * std::fmax(std::sqrt(yy), eps));
}

}  // namespace

FusedAdamP::FusedAdamP(const AdamPOptions& options, SegmentTable segments, std::vector<std::size_t> rows,
                       std::size_t block_elements)
    : FusedOptimizer(options),
      segments_(std::move(segments)),
      rows_(checked_rows(segments_, rows)),
      row_owner_(row_owners(rows_)),
      direct_plan_(unprojected(segments_, rows_)),
      row_plan_(row_ranges(segments_, rows_), row_owner_, block_elements),
      partials_(row_plan_.pieces().size() * kAdamPSums),
      row_sums_(row_plan_.group_count() * kAdamPSums),
      row_projection_(row_plan_.group_count()),
      row_decay_(row_plan_.group_count()),
      projections_(segments_.size(), Projection::none) {
  first_row_.reserve(segments_.size());
  std::size_t next = 0;
  for (std::size_t r : rows_) {
    first_row_.push_back(next);
    next += r;
  }
}

void FusedAdamP::decide_projection(std::size_t s) {
  const AdamPOptions& o = options_;
  const std::size_t rows = rows_[s];
  auto decay_for = [&](double wd_ratio) {
    return static_cast<float>(o.weight_decay > 0.0 ? 1.0 - o.lr * o.weight_decay * wd_ratio : 1.0);
  };
  const double* first = &row_sums_[first_row_[s] * kAdamPSums];
  const double row_length = static_cast<double>(segments_[s].numel / rows);
  double max_cosine = 0.0;
  double total[kAdamPSums] = {0.0, 0.0, 0.0, 0.0};
  for (std::size_t r = 0; r < rows; ++r) {
    const double* sums = first + r * kAdamPSums;
    max_cosine = std::fmax(max_cosine, abs_cosine(sums[0], sums[1], sums[2], o.eps));
    for (std::size_t j = 0; j < kAdamPSums; ++j) total[j] += sums[j];
  }
  Projection projection = Projection::none;
  if (segments_[s].numel == 0) {
    projection = Projection::none;
  } else if (max_cosine < o.delta / std::sqrt(row_length)) {
    projection = Projection::channel;
  } else if (abs_cosine(total[0], total[1], total[2], o.eps) <
             o.delta / std::sqrt(static_cast<double>(segments_[s].numel))) {
    projection = Projection::layer;
  }
  projections_[s] = projection;
  const float decay = decay_for(projection == Projection::none ? 1.0 : o.wd_ratio);
  for (std::size_t r = 0; r < rows; ++r) {
    const double* sums = projection == Projection::channel ? first + r * kAdamPSums : total;
    const double norm_eps = std::sqrt(sums[2]) + o.eps;
    row_projection_[first_row_[s] + r] =
        projection == Projection::none ? 0.0f : static_cast<float>(sums[3] / (norm_eps * norm_eps));
    row_decay_[first_row_[s] + r] = decay;
  }
}

bool FusedAdamP::step(const FusedBuffers& b, const State& state) {
  detail::check_buffers("AdamP", b);
  detail::check_state("AdamP", "exp_avg", state.exp_avg);
  detail::check_state("AdamP", "exp_avg_sq", state.exp_avg_sq);
  detail::check_extent("AdamP", b, segments_.extent());
  const AdamPOptions& o = options_;
  const double t = static_cast<double>(steps_ + 1);
  const double bias_correction1 = 1.0 - std::pow(o.beta1, t);
  const double bias_correction2 = 1.0 - std::pow(o.beta2, t);
  const AdamPArgs args{{b.params, b.grads, state.exp_avg, state.exp_avg_sq, b.half_params},
                       moment_rates(o.beta1, o.beta2),
                       static_cast<float>(o.lr / bias_correction1),
                       static_cast<float>(1.0 / std::sqrt(bias_correction2)),
                       static_cast<float>(o.eps),
                       o.nesterov};
  auto decay_for = [&](double wd_ratio) {
    return static_cast<float>(o.weight_decay > 0.0 ? 1.0 - o.lr * o.weight_decay * wd_ratio : 1.0);
  };
  auto* kernel = APEXNPU_ISA_SELECT(adamp_range);

  // Tensors below two dimensions: no projection, one pass.
  const AdamPRangeArgs direct{{true, false, true}, 0.0f, decay_for(1.0)};
  bool bad = detail::for_pieces(direct_plan_, [&](std::size_t, const WorkPiece& piece) {
    return kernel(args, direct, piece.begin, piece.end, nullptr);
  });

  // The others: moments and per-row sums, the projection decision per tensor, then the
  // update; block by block (see work_plan.h).
  const AdamPRangeArgs moments{{true, true, false}, 0.0f, 1.0f};
  bad |= detail::two_pass(
      row_plan_,
      [&](std::size_t k, const WorkPiece& piece) {
        kernel(args, moments, piece.begin, piece.end, &partials_[k * kAdamPSums]);
      },
      [&](const WorkBlock& block) {
        for (std::size_t r = block.first_group; r < block.end_group; ++r) {
          double* sums = &row_sums_[r * kAdamPSums];
          for (std::size_t j = 0; j < kAdamPSums; ++j) sums[j] = 0.0;
          for (std::size_t k = row_plan_.group_first(r); k < row_plan_.group_first(r + 1); ++k) {
            for (std::size_t j = 0; j < kAdamPSums; ++j) sums[j] += partials_[k * kAdamPSums + j];
          }
        }
        // A block holds whole tensors: decide each once all its rows are summed.
        for (std::size_t r = block.first_group; r < block.end_group; ++r) {
          if (r + 1 == block.end_group || row_owner_[r + 1] != row_owner_[r]) {
            decide_projection(row_owner_[r]);
          }
        }
      },
      [&](std::size_t, const WorkPiece& piece) {
        const AdamPRangeArgs apply{
            {false, false, true}, row_projection_[piece.group], row_decay_[piece.group]};
        return kernel(args, apply, piece.begin, piece.end, nullptr);
      });
  return finish_step(b, bad);
}

void validate(const AdamPOptions& o) {
  checks::require_adam_like("AdamP", o);
  checks::require_non_negative("AdamP", "delta value", o.delta);
  checks::require_non_negative("AdamP", "wd_ratio value", o.wd_ratio);
}

}  // namespace apexnpu::rt::optim
