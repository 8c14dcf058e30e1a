#pragma once
// Arguments of the optimizer kernels (one struct per algorithm), shared by the per-ISA kernel
// files and the optimizer classes that call them. All pointers index the same combined buffer
// (element i of p, g and every state buffer belong together); `p16` is null in fp32 mode, and in
// fp16 mode receives the saturated fp16 copy of the updated fp32 master `p` in the same pass.
// Scalars are precomputed per step in double by the caller and rounded once to float.
//
// Every kernel runs over an element range [begin, end) and returns true if it met a non-finite
// updated parameter or an fp16 store saturated (the caller raises the float status).
#include <cstddef>

#include "exec/half.h"
#include "exec/isa.h"

namespace apexnpu::rt::optim {

struct SgdArgs {
  float* p;
  const float* g;
  float* momentum_buffer;  // null without momentum
  half_bits* p16;
  float lr, momentum, one_minus_dampening, weight_decay;
  bool has_momentum, first_step, nesterov;
};

// Adam and AdamW: weight decay enters as l2 (grad += l2 * p) or as decay (p *= decay).
struct AdamArgs {
  float* p;
  const float* g;
  float* exp_avg;
  float* exp_avg_sq;
  float* max_exp_avg_sq;  // null unless amsgrad
  half_bits* p16;
  float step_size, beta1, one_minus_beta1, beta2, one_minus_beta2, inv_bias_correction2_sqrt, eps;
  float l2, decay;
  bool amsgrad;
};

// AdamP in up to three phases over a range (see adamp.cpp):
//  moments: update exp_avg / exp_avg_sq; reduce: accumulate g.p, g.g, p.p, p.perturb;
//  apply: p = p * decay - step_size * (perturb - projection * p).
struct AdamPArgs {
  float* p;
  const float* g;
  float* exp_avg;
  float* exp_avg_sq;
  half_bits* p16;
  float step_size, beta1, one_minus_beta1, beta2, one_minus_beta2, inv_bias_correction2_sqrt, eps;
  bool nesterov;
};
struct AdamPRangeArgs {
  bool moments, reduce, apply;
  float projection, decay;  // apply only
};
inline constexpr std::size_t kAdamPSums = 4;  // g.p, g.g, p.p, p.perturb

struct BertAdamArgs {
  float* p;
  const float* g;
  float* exp_avg;
  float* exp_avg_sq;
  half_bits* p16;
  float lr, beta1, one_minus_beta1, beta2, one_minus_beta2, eps, weight_decay;
};

struct AdadeltaArgs {
  float* p;
  const float* g;
  float* square_avg;
  float* acc_delta;
  half_bits* p16;
  float lr, rho, one_minus_rho, eps, weight_decay;
};

// LAMB phases as AdamP's: moments (exp_avg, exp_avg_sq from grad * grad_scale), reduce
// (p.p and update.update), apply (p -= lr * trust_ratio * update).
struct LambArgs {
  float* p;
  const float* g;
  float* exp_avg;
  float* exp_avg_sq;
  half_bits* p16;
  float beta1, one_minus_beta1, beta2, one_minus_beta2, eps, weight_decay;
};
struct LambRangeArgs {
  bool moments, reduce, apply;
  float grad_scale;
  float lr_times_trust_ratio;  // apply only
};
inline constexpr std::size_t kLambSums = 2;  // p.p, update.update

struct RmspropArgs {
  float* p;
  const float* g;
  float* square_avg;
  float* grad_avg;         // null unless centered
  float* momentum_buffer;  // null unless momentum > 0
  half_bits* p16;
  float lr, alpha, one_minus_alpha, eps, weight_decay, momentum;
  bool centered, has_momentum;
};

// timm RMSpropTF: weight decay as l2 (grad += l2 * p) or decoupled (p *= decay).
struct RmspropTfArgs {
  float* p;
  const float* g;
  float* square_avg;
  float* grad_avg;
  float* momentum_buffer;
  half_bits* p16;
  float lr, one_minus_alpha, eps, l2, decay, momentum;
  bool centered, has_momentum, lr_in_momentum;
};

// The kernels, one variant per ISA level (optim/*.kernels.cpp).
APEXNPU_ISA_DECLARE(bool, sgd_range, (const SgdArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, adam_range, (const AdamArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, adamp_range,
                    (const AdamPArgs& a, const AdamPRangeArgs& r, std::size_t begin,
                     std::size_t end, double* sums))
APEXNPU_ISA_DECLARE(bool, bert_adam_range,
                    (const BertAdamArgs& a, float grad_scale, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, adadelta_range, (const AdadeltaArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, lamb_range,
                    (const LambArgs& a, const LambRangeArgs& r, std::size_t begin, std::size_t end,
                     double* sums))
APEXNPU_ISA_DECLARE(bool, rmsprop_range, (const RmspropArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, rmsprop_tf_range,
                    (const RmspropTfArgs& a, std::size_t begin, std::size_t end))
// sum of g[i]^2 over [begin, end), in double (gradient-norm reductions).
APEXNPU_ISA_DECLARE(double, sum_squares_range, (const float* g, std::size_t begin, std::size_t end))

}  // namespace apexnpu::rt::optim
