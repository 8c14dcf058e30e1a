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

// What the Adam family (Adam/AdamW, AdamP, LAMB, BertAdam) shares: the buffers of the first and
// second moments beside p and g, and the moment rates m = beta1 * m + (1 - beta1) * g,
// v = beta2 * v + (1 - beta2) * g * g.
struct MomentBuffers {
  float* p;
  const float* g;
  float* exp_avg;
  float* exp_avg_sq;
  half_bits* p16;
};
struct MomentRates {
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
};
// Each rate computed in double and rounded once.
inline MomentRates moment_rates(double beta1, double beta2) {
  return {static_cast<float>(beta1), static_cast<float>(1.0 - beta1), static_cast<float>(beta2),
          static_cast<float>(1.0 - beta2)};
}

// Adam and AdamW: weight decay enters as l2 (grad += l2 * p) or as decay (p *= decay).
struct AdamArgs {
  MomentBuffers buffers;
  float* max_exp_avg_sq;  // null unless amsgrad
  MomentRates rates;
  float step_size, inv_bias_correction2_sqrt, eps;
  float l2, decay;
  bool amsgrad;
};

// The phases of a multi-phase step over a range (AdamP, LAMB): moments updates the moment
// buffers (else they are read), reduce accumulates per-range sums, apply updates p. The kernels
// take three combinations: moments + reduce, apply alone, and moments + apply in one pass.
struct KernelPhases {
  bool moments, reduce, apply;
};

// AdamP (see adamp.cpp): reduce accumulates g.p, g.g, p.p, p.perturb;
// apply: p = p * decay - step_size * (perturb - projection * p).
struct AdamPArgs {
  MomentBuffers buffers;
  MomentRates rates;
  float step_size, inv_bias_correction2_sqrt, eps;
  bool nesterov;
};
struct AdamPRangeArgs {
  KernelPhases phases;
  float projection, decay;  // apply only
};
inline constexpr std::size_t kAdamPSums = 4;  // g.p, g.g, p.p, p.perturb

struct AdadeltaArgs {
  float* p;
  const float* g;
  float* square_avg;
  float* acc_delta;
  half_bits* p16;
  float lr, rho, one_minus_rho, eps, weight_decay;
};

// LAMB (and BertAdam, which is LAMB's one-pass adam form): moments from grad * grad_scale;
// reduce accumulates p.p and update.update; apply: p -= lr * trust_ratio * update, where
// update = m / (sqrt(v) + eps) + weight_decay * p.
struct LambArgs {
  MomentBuffers buffers;
  MomentRates rates;
  float eps, weight_decay;
};
struct LambRangeArgs {
  KernelPhases phases;
  float grad_scale;
  float lr_times_trust_ratio;  // apply only
};
inline constexpr std::size_t kLambSums = 2;  // p.p, update.update

// The buffers of both RMSprop variants.
struct RmspropBuffers {
  float* p;
  const float* g;
  float* square_avg;
  float* grad_avg;         // null unless centered
  float* momentum_buffer;  // null unless momentum > 0
  half_bits* p16;
};

struct RmspropArgs {
  RmspropBuffers buffers;
  float lr, alpha, one_minus_alpha, eps, weight_decay, momentum;
  bool centered, has_momentum;
};

// timm RMSpropTF: weight decay as l2 (grad += l2 * p) or decoupled (p *= decay).
struct RmspropTfArgs {
  RmspropBuffers buffers;
  float lr, one_minus_alpha, eps, l2, decay, momentum;
  bool centered, has_momentum, lr_in_momentum;
};

// The kernels, one variant per ISA level (optim/*.kernels.cpp).
APEXNPU_ISA_DECLARE(bool, sgd_range, (const SgdArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, adam_range, (const AdamArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, adamp_range,
                    (const AdamPArgs& a, const AdamPRangeArgs& r, std::size_t begin, std::size_t end,
                     double* sums))
APEXNPU_ISA_DECLARE(bool, adadelta_range, (const AdadeltaArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, lamb_range,
                    (const LambArgs& a, const LambRangeArgs& r, std::size_t begin, std::size_t end,
                     double* sums))
APEXNPU_ISA_DECLARE(bool, rmsprop_range, (const RmspropArgs& a, std::size_t begin, std::size_t end))
APEXNPU_ISA_DECLARE(bool, rmsprop_tf_range, (const RmspropTfArgs& a, std::size_t begin, std::size_t end))
// sum of g[i]^2 over [begin, end), in double (gradient-norm reductions).
APEXNPU_ISA_DECLARE(double, sum_squares_range, (const float* g, std::size_t begin, std::size_t end))

}  // namespace apexnpu::rt::optim
