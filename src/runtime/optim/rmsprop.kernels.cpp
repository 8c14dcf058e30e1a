// RMSprop (torch.optim.RMSprop) and RMSpropTF (timm) over a range of the combined buffer,
// one pass each.
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {
namespace {

template <bool kCentered, bool kMomentum>
bool rmsprop_impl(const RmspropArgs& a, std::size_t begin, std::size_t end) {
  const V16 lr(a.lr), alpha(a.alpha), oma(a.one_minus_alpha), eps(a.eps), wd(a.weight_decay),
      momentum(a.momentum);
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const square_avg_buf = a.square_avg;
  float* const grad_avg_buf = a.grad_avg;
  float* const momentum_buf = a.momentum_buffer;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(param + i, lanes);
    const V16 g = load(grad + i, lanes) + wd * p;
    const V16 square_avg = alpha * load(square_avg_buf + i, lanes) + oma * (g * g);
    store(square_avg_buf + i, square_avg, lanes);
    V16 avg;
    if constexpr (kCentered) {
      V16 grad_avg = load(grad_avg_buf + i, lanes);
      grad_avg = grad_avg + oma * (g - grad_avg);  // torch: grad_avg.lerp_(grad, 1 - alpha)
      store(grad_avg_buf + i, grad_avg, lanes);
      avg = sqrt(square_avg - grad_avg * grad_avg) + eps;
    } else {
      avg = sqrt(square_avg) + eps;
    }
    V16 updated;
    if constexpr (kMomentum) {
      const V16 buf = momentum * load(momentum_buf + i, lanes) + g / avg;
      store(momentum_buf + i, buf, lanes);
      updated = p - lr * buf;
    } else {
      updated = p - lr * (g / avg);
    }
    store_param(param, p16, i, updated, lanes, bad);
  });
  return bad.any();
}

template <bool kCentered, bool kMomentum, bool kLrInMomentum>
bool rmsprop_tf_impl(const RmspropTfArgs& a, std::size_t begin, std::size_t end) {
  const V16 lr(a.lr), oma(a.one_minus_alpha), eps(a.eps), l2(a.l2), decay(a.decay),
      momentum(a.momentum);
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const square_avg_buf = a.square_avg;
  float* const grad_avg_buf = a.grad_avg;
  float* const momentum_buf = a.momentum_buffer;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p_in = load(param + i, lanes);
    const V16 g = load(grad + i, lanes) + l2 * p_in;
    const V16 p = p_in * decay;  // decoupled decay happens before the update
    V16 square_avg = load(square_avg_buf + i, lanes);
    square_avg = square_avg + oma * (g * g - square_avg);  // TensorFlow's order of operations
    store(square_avg_buf + i, square_avg, lanes);
    V16 avg;
    if constexpr (kCentered) {
      V16 grad_avg = load(grad_avg_buf + i, lanes);
      grad_avg = grad_avg + oma * (g - grad_avg);
      store(grad_avg_buf + i, grad_avg, lanes);
      avg = sqrt(square_avg - grad_avg * grad_avg + eps);  // eps inside the sqrt
    } else {
      avg = sqrt(square_avg + eps);
    }
    V16 updated;
    if constexpr (kMomentum) {
      const V16 buf_in = momentum * load(momentum_buf + i, lanes);
      if constexpr (kLrInMomentum) {
        const V16 buf = buf_in + lr * (g / avg);
        store(momentum_buf + i, buf, lanes);
        updated = p - buf;
      } else {
        const V16 buf = buf_in + g / avg;
        store(momentum_buf + i, buf, lanes);
        updated = p - lr * buf;
      }
    } else {
      updated = p - lr * (g / avg);
    }
    store_param(param, p16, i, updated, lanes, bad);
  });
  return bad.any();
}

}  // namespace

bool rmsprop_range(const RmspropArgs& a, std::size_t begin, std::size_t end) {
  if (a.centered) {
    return a.has_momentum ? rmsprop_impl<true, true>(a, begin, end)
                          : rmsprop_impl<true, false>(a, begin, end);
  }
  return a.has_momentum ? rmsprop_impl<false, true>(a, begin, end)
                        : rmsprop_impl<false, false>(a, begin, end);
}

bool rmsprop_tf_range(const RmspropTfArgs& a, std::size_t begin, std::size_t end) {
  if (!a.has_momentum) {
    return a.centered ? rmsprop_tf_impl<true, false, false>(a, begin, end)
                      : rmsprop_tf_impl<false, false, false>(a, begin, end);
  }
  if (a.lr_in_momentum) {
    return a.centered ? rmsprop_tf_impl<true, true, true>(a, begin, end)
                      : rmsprop_tf_impl<false, true, true>(a, begin, end);
  }
  return a.centered ? rmsprop_tf_impl<true, true, false>(a, begin, end)
                    : rmsprop_tf_impl<false, true, false>(a, begin, end);
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
