#pragma once
// ReLU and its gradient computed directly on fp16 values, with the emulated NPU's fp16
// arithmetic: the results are those of torch's fp32 kernels on the exact fp32 values of the
// inputs, stored back as fp16 with saturation (exec/half.h), but in one pass over fp16 memory
// instead of a widening pass, the fp32 kernel and a narrowing pass. Only comparisons and
// selections are involved, so the work is on bit patterns:
//   relu(x):               x > 0 keeps x, and so do +0 and -0 (torch's max(0, x) returns x
//                          when both are zero); x < 0 (-inf too) gives +0; NaN gives +0 and
//                          +inf gives 65504, both reported.
//   relu_backward(g, s):   s <= 0 (+-0, negatives, -inf) gives +0; otherwise g (NaN in s
//                          compares false, so it passes g), with g's NaN stored as +0 and its
//                          +-inf as +-65504, both reported.
// Each returns true when something was reported (the caller raises the device float status).
// in/out (and grad/self/out) may be the same buffer; other overlaps are not allowed.
#include <cstddef>

#include "exec/half.h"

namespace apexnpu::rt {

bool relu_half(const half_bits* in, half_bits* out, std::size_t n);
bool relu_backward_half(const half_bits* grad, const half_bits* self, half_bits* out,
                        std::size_t n);

}  // namespace apexnpu::rt
