#pragma once
// Fused BertAdam: HuggingFace pytorch-pretrained-bert's BertAdam. No bias correction; weight
// decay added to the update (update = m / (sqrt(v) + e) + weight_decay * p, when
// weight_decay > 0); the learning rate follows the warmup schedule at progress step / t_total
// (step counted from 0; t_total < 0: constant); max_grad_norm > 0 clips each tensor's gradient
// as torch.nn.utils.clip_grad_norm_(p, max_grad_norm) does, per tensor of the segment table.
// The clipped gradient is used for the update but not written back to the grads buffer.
// One pass per step without clipping, two (a gradient-norm read, then the update) with it.
#include <string>
#include <vector>

#include "optim/fused_optimizer.h"
#include "tensor/segment_table.h"

namespace apexnpu::rt::optim {

enum class WarmupSchedule { warmup_linear, warmup_cosine, warmup_constant, none };
WarmupSchedule parse_warmup_schedule(const std::string& name);  // throws on unknown names
const char* to_string(WarmupSchedule schedule) noexcept;

struct BertAdamOptions {  // HuggingFace pytorch-pretrained-bert BertAdam
  double lr = kRequired;
  double warmup = -1.0;
  double t_total = -1.0;
  WarmupSchedule schedule = WarmupSchedule::warmup_linear;
  double b1 = 0.9;
  double b2 = 0.99;
  double e = 1e-6;
  double weight_decay = 0.01;
  double max_grad_norm = -1.0;
  static constexpr auto fields() {
    return std::tuple{Field{"lr", &BertAdamOptions::lr},
                      Field{"warmup", &BertAdamOptions::warmup},
                      Field{"t_total", &BertAdamOptions::t_total},
                      Field{"schedule", &BertAdamOptions::schedule},
                      Field{"b1", &BertAdamOptions::b1},
                      Field{"b2", &BertAdamOptions::b2},
                      Field{"e", &BertAdamOptions::e},
                      Field{"weight_decay", &BertAdamOptions::weight_decay},
                      Field{"max_grad_norm", &BertAdamOptions::max_grad_norm}};
  }
};

// BertAdam's learning-rate multiplier at `progress` = step / t_total (step counted from 0).
double warmup_factor(WarmupSchedule schedule, double progress, double warmup);
void validate(const BertAdamOptions& o);  // throws ArgumentError naming what is wrong

class FusedBertAdam : public FusedOptimizer<BertAdamOptions> {
 public:
  struct State {
    float* exp_avg = nullptr;     // HuggingFace's next_m
    float* exp_avg_sq = nullptr;  // HuggingFace's next_v
    static constexpr auto fields() {
      return std::array{Field{"exp_avg", &State::exp_avg}, Field{"exp_avg_sq", &State::exp_avg_sq}};
    }
  };
  // block_elements: the cache-blocking size of the two-pass path (see work_plan.h).
  FusedBertAdam(const BertAdamOptions& options, SegmentTable segments,
                std::size_t block_elements = kBlockElements);
  bool step(const FusedBuffers& buffers, const State& state);
  // The learning rate the next step uses (lr times the schedule's factor).
  double scheduled_lr() const;

 private:
  SegmentTable segments_;
  WorkPlan plan_;
  std::vector<double> partials_;    // one per piece
  std::vector<float> grad_scales_;  // one per segment
};

}  // namespace apexnpu::rt::optim
