// RMSprop (torch.optim.RMSprop) and RMSpropTF (timm) over a range of the combined buffer,
// one pass each.
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {
namespace {

// buf[i] moved toward target by rate (torch's lerp_ order: x + rate * (target - x)), stored back.
template <typename Lanes>
V16 lerp_into(float* buf, std::size_t i, V16 target, V16 rate, Lanes lanes) {
  const V16 x = load(buf + i, lanes);
  const V16 moved = x + rate * (target - x);
  store(buf + i, moved, lanes);
  return moved;
}

// momentum * buf[i] + step, stored back.
template <typename Lanes>
V16 accumulate_momentum(float* buf, std::size_t i, V16 momentum, V16 step, Lanes lanes) {
  const V16 updated = momentum * load(buf + i, lanes) + step;
  store(buf + i, updated, lanes);
  return updated;
}

// Each kernel copies the buffers into a local: stores through them cannot change a local whose
// address does not escape, so the pointers stay in registers.

template <bool kCentered, bool kMomentum>
bool rmsprop_impl(const RmspropArgs& a, std::size_t begin, std::size_t end) {
  const V16 lr(a.lr), alpha(a.alpha), oma(a.one_minus_alpha), eps(a.eps), wd(a.weight_decay),
      momentum(a.momentum);
  const RmspropBuffers b = a.buffers;
  BadLanes bad;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(b.p + i, lanes);
    const V16 g = load(b.g + i, lanes) + wd * p;
    const V16 square_avg = average_into(b.square_avg, i, g * g, alpha, oma, lanes);
    V16 avg;
    if constexpr (kCentered) {
      const V16 grad_avg = lerp_into(b.grad_avg, i, g, oma, lanes);  // torch: lerp_(grad, 1 - alpha)
      avg = sqrt(square_avg - grad_avg * grad_avg) + eps;
    } else {
      avg = sqrt(square_avg) + eps;
    }
    const V16 step =
        kMomentum ? accumulate_momentum(b.momentum_buffer, i, momentum, g / avg, lanes) : g / avg;
    store_param(b.p, b.p16, i, p - lr * step, lanes, bad);
  });
  return bad.any();
}

template <bool kCentered, bool kMomentum, bool kLrInMomentum>
bool rmsprop_tf_impl(const RmspropTfArgs& a, std::size_t begin, std::size_t end) {
  const V16 lr(a.lr), oma(a.one_minus_alpha), eps(a.eps), l2(a.l2), decay(a.decay), momentum(a.momentum);
  const RmspropBuffers b = a.buffers;
  BadLanes bad;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p_in = load(b.p + i, lanes);
    const V16 g = load(b.g + i, lanes) + l2 * p_in;
    const V16 p = p_in * decay;  // decoupled decay happens before the update
    const V16 square_avg = lerp_into(b.square_avg, i, g * g, oma, lanes);  // TensorFlow's order
    V16 variance = square_avg;
    if constexpr (kCentered) {
      const V16 grad_avg = lerp_into(b.grad_avg, i, g, oma, lanes);
      variance = square_avg - grad_avg * grad_avg;
    }
    const V16 avg = sqrt(variance + eps);  // eps inside the sqrt
    V16 updated;
    if constexpr (kMomentum && kLrInMomentum) {
      updated = p - accumulate_momentum(b.momentum_buffer, i, momentum, lr * (g / avg), lanes);
    } else if constexpr (kMomentum) {
      updated = p - lr * accumulate_momentum(b.momentum_buffer, i, momentum, g / avg, lanes);
    } else {
      updated = p - lr * (g / avg);
    }
    store_param(b.p, b.p16, i, updated, lanes, bad);
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
