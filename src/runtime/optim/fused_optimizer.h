#pragma once
// What every fused optimizer shares: the buffers of one step, the hyper-parameters (checked on
// construction and on every change), the step count, and the parallel drivers.
//
// Modes: fp32 params (half_params == nullptr), or fp16 model params with fp32 master params:
// `params` is then the fp32 master copy, which the step updates, and `half_params` receives its
// saturated fp16 copy in the same pass (overflow raises the float status). `grads` are fp32 in
// both modes; in fp16 mode they are the fp32 master gradients the loss scaler's unscale wrote.
// State buffers (exp_avg, ...) are fp32, numel long, owned by the caller (the Python side keeps
// them in torch tensors for torch-compatible state_dicts) and initialised by it: zeros, except
// RMSpropTF's square_avg (ones). No step allocates memory.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "backend/device.h"
#include "exec/chunking.h"
#include "exec/half.h"
#include "exec/thread_pool.h"
#include "optim/fused_buffers.h"
#include "optim/options.h"
#include "optim/work_plan.h"

namespace apexnpu::rt::optim {

namespace detail {

// ArgumentError unless params and grads are set and distinct from each other.
void check_buffers(const char* optimizer, const FusedBuffers& buffers);
// ArgumentError naming the state buffer when it is null.
void check_state(const char* optimizer, const char* name, const float* state);
// ArgumentError unless steps >= 0.
void check_step_count(std::int64_t steps);
// ArgumentError when the buffers are shorter than the segment table's extent.
void check_extent(const char* optimizer, const FusedBuffers& buffers, std::size_t extent);
// Raises the float status of the buffers' device when `bad`; returns `bad`.
bool report(const FusedBuffers& buffers, bool bad);

// fn(begin, end) -> bool over the fixed chunks of [0, n), in parallel; ORs the results.
template <typename Fn>
bool for_chunks(std::size_t n, Fn&& fn) {
  std::atomic<bool> bad{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    if (fn(r.begin, r.end)) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load(std::memory_order_relaxed);
}

// kernel(args, begin, end) over the fixed chunks of [0, n): the step of the optimizers that
// treat every element alike.
template <typename Args>
bool one_pass(std::size_t n, bool (*kernel)(const Args&, std::size_t, std::size_t), const Args& args) {
  return for_chunks(n, [&](std::size_t begin, std::size_t end) { return kernel(args, begin, end); });
}

// fn(piece_index, piece) -> bool for every piece of units [first_unit, end_unit) (default: the
// whole plan), unit by unit in parallel; ORs the results.
template <typename Fn>
bool for_pieces(const WorkPlan& plan, Fn&& fn, std::size_t first_unit = 0,
                std::size_t end_unit = static_cast<std::size_t>(-1)) {
  if (end_unit > plan.unit_count()) end_unit = plan.unit_count();
  std::atomic<bool> bad{false};
  parallel_for(end_unit - first_unit, [&](std::size_t index) {
    const std::size_t u = first_unit + index;
    bool any = false;
    for (std::size_t k = plan.unit_first(u); k < plan.unit_first(u + 1); ++k) {
      any |= fn(k, plan.pieces()[k]);
    }
    if (any) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load(std::memory_order_relaxed);
}

// A two-pass step over a plan: pass1(piece_index, piece) for every piece of a block, then
// combine(block) (per-group results from the partials), then pass2(piece_index, piece) -> bool.
// Small blocks run whole on one thread each, in parallel; then all large blocks run pass 1 in
// parallel over their units, the combine, pass 2 in parallel (see work_plan.h). Returns the OR
// of pass2's results.
template <typename Pass1, typename Combine, typename Pass2>
bool two_pass(const WorkPlan& plan, Pass1&& pass1, Combine&& combine, Pass2&& pass2) {
  std::atomic<bool> bad{false};
  const auto small = plan.small_blocks();
  parallel_for(small.size(), [&](std::size_t index) {
    const WorkBlock& block = plan.blocks()[small[index]];
    bool any = false;
    for (std::size_t u = block.first_unit; u < block.end_unit; ++u) {
      for (std::size_t k = plan.unit_first(u); k < plan.unit_first(u + 1); ++k) pass1(k, plan.pieces()[k]);
    }
    combine(block);
    for (std::size_t u = block.first_unit; u < block.end_unit; ++u) {
      for (std::size_t k = plan.unit_first(u); k < plan.unit_first(u + 1); ++k)
        any |= pass2(k, plan.pieces()[k]);
    }
    if (any) bad.store(true, std::memory_order_relaxed);
  });
  const auto large_units = plan.large_units();
  if (large_units.empty()) return bad.load(std::memory_order_relaxed);
  parallel_for(large_units.size(), [&](std::size_t index) {
    const std::size_t u = large_units[index];
    for (std::size_t k = plan.unit_first(u); k < plan.unit_first(u + 1); ++k) pass1(k, plan.pieces()[k]);
  });
  for (const std::size_t index : plan.large_blocks()) combine(plan.blocks()[index]);
  parallel_for(large_units.size(), [&](std::size_t index) {
    const std::size_t u = large_units[index];
    bool any = false;
    for (std::size_t k = plan.unit_first(u); k < plan.unit_first(u + 1); ++k)
      any |= pass2(k, plan.pieces()[k]);
    if (any) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load(std::memory_order_relaxed);
}

}  // namespace detail

// Options and step count of one optimizer. Options is the kind's struct (in its optim/<name>.h).
template <typename OptionsT>
class FusedOptimizer {
 public:
  using Options = OptionsT;

  explicit FusedOptimizer(const Options& options) : options_(options) { validate(options_); }

  const Options& options() const noexcept { return options_; }
  // New hyper-parameters (an lr schedule, load_state_dict); checked like the constructor's.
  void set_options(const Options& options) {
    validate(options);
    options_ = options;
  }
  // Steps taken so far (torch's state['step']); the Python side restores it on load.
  std::int64_t step_count() const noexcept { return steps_; }
  void set_step_count(std::int64_t steps) {
    detail::check_step_count(steps);
    steps_ = steps;
  }

 protected:
  // Counts the step just taken and raises the buffers' float status when it was bad.
  bool finish_step(const FusedBuffers& buffers, bool bad) {
    ++steps_;
    return detail::report(buffers, bad);
  }

  Options options_;
  std::int64_t steps_ = 0;
};

}  // namespace apexnpu::rt::optim
