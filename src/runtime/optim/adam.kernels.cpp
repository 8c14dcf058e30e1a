// The Adam family over a range of the combined buffer: Adam/AdamW (one pass), AdamP and LAMB
// (phases: moments, per-range reductions, apply). BertAdam runs as LAMB's one-pass form.
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {
namespace {

struct MomentVectors {
  explicit MomentVectors(const MomentRates& r)
      : beta1(r.beta1),
        one_minus_beta1(r.one_minus_beta1),
        beta2(r.beta2),
        one_minus_beta2(r.one_minus_beta2) {}
  V16 beta1, one_minus_beta1, beta2, one_minus_beta2;
};

struct Moments {
  V16 m, v;
};

// The moments of one block, updated from g and stored back.
template <typename Lanes>
Moments update_moments(const MomentBuffers& b, std::size_t i, V16 g, const MomentVectors& r, Lanes lanes) {
  const V16 m = average_into(b.exp_avg, i, g, r.beta1, r.one_minus_beta1, lanes);
  const V16 v = average_into(b.exp_avg_sq, i, g * g, r.beta2, r.one_minus_beta2, lanes);
  return {m, v};
}

template <typename Lanes>
Moments load_moments(const MomentBuffers& b, std::size_t i, Lanes lanes) {
  return {load(b.exp_avg + i, lanes), load(b.exp_avg_sq + i, lanes)};
}

// f.template operator()<kMoments, kReduce, kApply>() for the three combinations of phases the
// multi-phase optimizers run (kernel_args.h).
template <typename F>
bool by_phases(const KernelPhases& p, F&& f) {
  if (p.moments && p.reduce && !p.apply) return f.template operator()<true, true, false>();
  if (!p.moments && !p.reduce && p.apply) return f.template operator()<false, false, true>();
  if (p.moments && !p.reduce && p.apply) return f.template operator()<true, false, true>();
  __builtin_unreachable();
}

// Each kernel copies the buffers into a local: stores through them cannot change a local whose
// address does not escape, so the pointers stay in registers.

template <bool kAmsgrad>
bool adam_impl(const AdamArgs& a, std::size_t begin, std::size_t end) {
  const MomentVectors rates(a.rates);
  const V16 step_size(a.step_size), inv_bc2_sqrt(a.inv_bias_correction2_sqrt), eps(a.eps), l2(a.l2),
      decay(a.decay);
  const MomentBuffers b = a.buffers;
  float* const max_exp_avg_sq = a.max_exp_avg_sq;
  BadLanes bad;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(b.p + i, lanes);
    auto [m, v] = update_moments(b, i, load(b.g + i, lanes) + l2 * p, rates, lanes);
    if constexpr (kAmsgrad) {
      v = max(load(max_exp_avg_sq + i, lanes), v);
      store(max_exp_avg_sq + i, v, lanes);
    }
    const V16 denom = sqrt(v) * inv_bc2_sqrt + eps;
    store_param(b.p, b.p16, i, p * decay - step_size * (m / denom), lanes, bad);
  });
  return bad.any();
}

template <bool kMoments, bool kReduce, bool kApply, bool kNesterov>
bool adamp_impl(const AdamPArgs& a, const AdamPRangeArgs& r, std::size_t begin, std::size_t end,
                double* sums) {
  const MomentVectors rates(a.rates);
  const V16 step_size(a.step_size), inv_bc2_sqrt(a.inv_bias_correction2_sqrt), eps(a.eps),
      projection(r.projection), decay(r.decay);
  const MomentBuffers b = a.buffers;
  Sum16 gp, gg, pp, pu;
  BadLanes bad;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(b.p + i, lanes);
    const V16 g = load(b.g + i, lanes);
    Moments mv;
    if constexpr (kMoments) {
      mv = update_moments(b, i, g, rates, lanes);
    } else {
      mv = load_moments(b, i, lanes);
    }
    const V16 denom = sqrt(mv.v) * inv_bc2_sqrt + eps;
    const V16 perturb = (kNesterov ? rates.beta1 * mv.m + rates.one_minus_beta1 * g : mv.m) / denom;
    if constexpr (kReduce) {
      const V16 u = live(perturb, lanes);
      add_product(gp, g, p);
      add_product(gg, g, g);
      add_product(pp, p, p);
      add_product(pu, p, u);
    }
    if constexpr (kApply) {
      store_param(b.p, b.p16, i, p * decay - step_size * (perturb - projection * p), lanes, bad);
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

template <bool kMoments, bool kReduce, bool kApply>
bool lamb_impl(const LambArgs& a, const LambRangeArgs& r, std::size_t begin, std::size_t end, double* sums) {
  const MomentVectors rates(a.rates);
  const V16 eps(a.eps), wd(a.weight_decay), grad_scale(r.grad_scale), lr_tr(r.lr_times_trust_ratio);
  const MomentBuffers b = a.buffers;
  Sum16 pp, uu;
  BadLanes bad;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(b.p + i, lanes);
    Moments mv;
    if constexpr (kMoments) {
      mv = update_moments(b, i, load(b.g + i, lanes) * grad_scale, rates, lanes);
    } else {
      mv = load_moments(b, i, lanes);
    }
    const V16 update = mv.m / (sqrt(mv.v) + eps) + wd * p;
    if constexpr (kReduce) {
      const V16 u = live(update, lanes);
      add_product(pp, p, p);
      add_product(uu, u, u);
    }
    if constexpr (kApply) store_param(b.p, b.p16, i, p - lr_tr * update, lanes, bad);
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
  return by_phases(r.phases, [&]<bool kMoments, bool kReduce, bool kApply>() {
    return a.nesterov ? adamp_impl<kMoments, kReduce, kApply, true>(a, r, begin, end, sums)
                      : adamp_impl<kMoments, kReduce, kApply, false>(a, r, begin, end, sums);
  });
}

bool lamb_range(const LambArgs& a, const LambRangeArgs& r, std::size_t begin, std::size_t end, double* sums) {
  return by_phases(r.phases, [&]<bool kMoments, bool kReduce, bool kApply>() {
    return lamb_impl<kMoments, kReduce, kApply>(a, r, begin, end, sums);
  });
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
