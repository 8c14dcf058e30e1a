// The Adam family over a range of the combined buffer: Adam/AdamW (one pass), AdamP and LAMB
// (phases: moments, per-tensor reductions, apply), BertAdam (one pass, per-tensor grad scale).
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {
namespace {

template <bool kAmsgrad>
bool adam_impl(const AdamArgs& a, std::size_t begin, std::size_t end) {
  const V16 step_size(a.step_size), b1(a.beta1), omb1(a.one_minus_beta1), b2(a.beta2),
      omb2(a.one_minus_beta2), inv_bc2_sqrt(a.inv_bias_correction2_sqrt), eps(a.eps), l2(a.l2),
      decay(a.decay);
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const exp_avg = a.exp_avg;
  float* const exp_avg_sq = a.exp_avg_sq;
  float* const max_exp_avg_sq = a.max_exp_avg_sq;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(param + i, lanes);
    const V16 g = load(grad + i, lanes) + l2 * p;
    const V16 m = b1 * load(exp_avg + i, lanes) + omb1 * g;
    V16 v = b2 * load(exp_avg_sq + i, lanes) + omb2 * (g * g);
    store(exp_avg + i, m, lanes);
    store(exp_avg_sq + i, v, lanes);
    if constexpr (kAmsgrad) {
      v = max(load(max_exp_avg_sq + i, lanes), v);
      store(max_exp_avg_sq + i, v, lanes);
    }
    const V16 denom = sqrt(v) * inv_bc2_sqrt + eps;
    store_param(param, p16, i, p * decay - step_size * (m / denom), lanes, bad);
  });
  return bad.any();
}

template <bool kMoments, bool kReduce, bool kApply, bool kNesterov>
bool adamp_impl(const AdamPArgs& a, const AdamPRangeArgs& r, std::size_t begin, std::size_t end,
                double* sums) {
  const V16 step_size(a.step_size), b1(a.beta1), omb1(a.one_minus_beta1), b2(a.beta2),
      omb2(a.one_minus_beta2), inv_bc2_sqrt(a.inv_bias_correction2_sqrt), eps(a.eps),
      projection(r.projection), decay(r.decay);
  Sum16 gp, gg, pp, pu;
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const exp_avg = a.exp_avg;
  float* const exp_avg_sq = a.exp_avg_sq;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(param + i, lanes);
    const V16 g = load(grad + i, lanes);
    V16 m, v;
    if constexpr (kMoments) {
      m = b1 * load(exp_avg + i, lanes) + omb1 * g;
      v = b2 * load(exp_avg_sq + i, lanes) + omb2 * (g * g);
      store(exp_avg + i, m, lanes);
      store(exp_avg_sq + i, v, lanes);
    } else {
      m = load(exp_avg + i, lanes);
      v = load(exp_avg_sq + i, lanes);
    }
    const V16 denom = sqrt(v) * inv_bc2_sqrt + eps;
    const V16 perturb = (kNesterov ? b1 * m + omb1 * g : m) / denom;
    if constexpr (kReduce) {
      const V16 u = live(perturb, lanes);
      add_product(gp, g, p);
      add_product(gg, g, g);
      add_product(pp, p, p);
      add_product(pu, p, u);
    }
    if constexpr (kApply) {
      store_param(param, p16, i, p * decay - step_size * (perturb - projection * p), lanes, bad);
    }
  });
  if constexpr (kReduce) {
    sums[0] = total(gp);
    sums[1] = total(gg);
    sums[2] = total(pp);
    sums[3] = total(pu);
  }
  return bad.any();
}

template <bool kNesterov>
bool adamp_phases(const AdamPArgs& a, const AdamPRangeArgs& r, std::size_t begin, std::size_t end,
                  double* sums) {
  if (r.moments && r.reduce && !r.apply) return adamp_impl<true, true, false, kNesterov>(a, r, begin, end, sums);
  if (!r.moments && !r.reduce && r.apply) return adamp_impl<false, false, true, kNesterov>(a, r, begin, end, sums);
  if (r.moments && !r.reduce && r.apply) return adamp_impl<true, false, true, kNesterov>(a, r, begin, end, sums);
  __builtin_unreachable();  // the three phase combinations AdamP uses
}

template <bool kMoments, bool kReduce, bool kApply>
bool lamb_impl(const LambArgs& a, const LambRangeArgs& r, std::size_t begin, std::size_t end,
               double* sums) {
  const V16 b1(a.beta1), omb1(a.one_minus_beta1), b2(a.beta2), omb2(a.one_minus_beta2),
      eps(a.eps), wd(a.weight_decay), grad_scale(r.grad_scale), lr_tr(r.lr_times_trust_ratio);
  Sum16 pp, uu;
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const exp_avg = a.exp_avg;
  float* const exp_avg_sq = a.exp_avg_sq;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(param + i, lanes);
    V16 m, v;
    if constexpr (kMoments) {
      const V16 g = load(grad + i, lanes) * grad_scale;
      m = b1 * load(exp_avg + i, lanes) + omb1 * g;
      v = b2 * load(exp_avg_sq + i, lanes) + omb2 * (g * g);
      store(exp_avg + i, m, lanes);
      store(exp_avg_sq + i, v, lanes);
    } else {
      m = load(exp_avg + i, lanes);
      v = load(exp_avg_sq + i, lanes);
    }
    const V16 update = m / (sqrt(v) + eps) + wd * p;
    if constexpr (kReduce) {
      const V16 u = live(update, lanes);
      add_product(pp, p, p);
      add_product(uu, u, u);
    }
    if constexpr (kApply) store_param(param, p16, i, p - lr_tr * update, lanes, bad);
  });
  if constexpr (kReduce) {
    sums[0] = total(pp);
    sums[1] = total(uu);
  }
  return bad.any();
}

}  // namespace

bool adam_range(const AdamArgs& a, std::size_t begin, std::size_t end) {
  return a.amsgrad ? adam_impl<true>(a, begin, end) : adam_impl<false>(a, begin, end);
}

bool adamp_range(const AdamPArgs& a, const AdamPRangeArgs& r, std::size_t begin, std::size_t end,
                 double* sums) {
  return a.nesterov ? adamp_phases<true>(a, r, begin, end, sums)
                    : adamp_phases<false>(a, r, begin, end, sums);
}

bool bert_adam_range(const BertAdamArgs& a, float grad_scale_value, std::size_t begin,
                     std::size_t end) {
  const V16 lr(a.lr), b1(a.beta1), omb1(a.one_minus_beta1), b2(a.beta2), omb2(a.one_minus_beta2),
      eps(a.eps), wd(a.weight_decay), grad_scale(grad_scale_value);
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const exp_avg = a.exp_avg;
  float* const exp_avg_sq = a.exp_avg_sq;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(param + i, lanes);
    const V16 g = load(grad + i, lanes) * grad_scale;
    const V16 m = b1 * load(exp_avg + i, lanes) + omb1 * g;
    const V16 v = b2 * load(exp_avg_sq + i, lanes) + omb2 * (g * g);
    store(exp_avg + i, m, lanes);
    store(exp_avg_sq + i, v, lanes);
    const V16 update = m / (sqrt(v) + eps) + wd * p;
    store_param(param, p16, i, p - lr * update, lanes, bad);
  });
  return bad.any();
}

bool lamb_range(const LambArgs& a, const LambRangeArgs& r, std::size_t begin, std::size_t end,
                double* sums) {
  if (r.moments && r.reduce && !r.apply) return lamb_impl<true, true, false>(a, r, begin, end, sums);
  if (!r.moments && !r.reduce && r.apply) return lamb_impl<false, false, true>(a, r, begin, end, sums);
  if (r.moments && !r.reduce && r.apply) return lamb_impl<true, false, true>(a, r, begin, end, sums);
  __builtin_unreachable();  // the three phase combinations LAMB uses
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
