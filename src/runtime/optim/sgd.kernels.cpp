// SGD (torch.optim.SGD) over a range of the combined buffer, one pass.
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {
namespace {

template <bool kMomentum, bool kFirstStep, bool kNesterov>
bool sgd_impl(const SgdArgs& a, std::size_t begin, std::size_t end) {
  const V16 lr(a.lr), momentum(a.momentum), damp(a.one_minus_dampening), wd(a.weight_decay);
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const momentum_buffer = a.momentum_buffer;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    V16 p = load(param + i, lanes);
    V16 d = load(grad + i, lanes) + wd * p;
    if constexpr (kMomentum) {
      V16 buf;
      if constexpr (kFirstStep) {
        buf = d;  // torch: the first buffer is a copy of the gradient
      } else {
        buf = momentum * load(momentum_buffer + i, lanes) + damp * d;
      }
      store(momentum_buffer + i, buf, lanes);
      d = kNesterov ? d + momentum * buf : buf;
    }
    store_param(param, p16, i, p - lr * d, lanes, bad);
  });
  return bad.any();
}

}  // namespace

bool sgd_range(const SgdArgs& a, std::size_t begin, std::size_t end) {
  if (!a.has_momentum) return sgd_impl<false, false, false>(a, begin, end);
  if (a.first_step) {
    return a.nesterov ? sgd_impl<true, true, true>(a, begin, end)
                      : sgd_impl<true, true, false>(a, begin, end);
  }
  return a.nesterov ? sgd_impl<true, false, true>(a, begin, end)
                    : sgd_impl<true, false, false>(a, begin, end);
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
