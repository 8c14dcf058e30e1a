#pragma once
// fp16 operations of the emulated NPU done in one pass over fp16 memory. Each result is what
// the emulation's general path computes: torch's fp32 operation on the exact fp32 values of the
// inputs, stored back as fp16 with saturation (exec/half.h: NaN -> +0, beyond +-65504 ->
// +-65504, both reported), without the widening pass, the fp32 buffer and the narrowing pass.
//   saturate(x):           x itself, stored saturating (a copy of fp16 values: NaN -> +0 and
//                          +-inf -> +-65504, reported).
//   add(a, b):             the fp32 sum a + b (one IEEE rounding), stored saturating.
//   multiply(x, factor):   the fp32 product x * factor (one IEEE rounding), stored saturating.
//   divide(x, divisor):    the fp32 quotient x / divisor (one IEEE rounding), stored
//                          saturating; torch's fp32 kernels divide, they do not multiply by a
//                          reciprocal, and neither does this, except by the exact reciprocal
//                          of a power of two (the same number, so the same rounding).
//   relu(x):               x > 0 keeps x, and so do +0 and -0 (torch's max(0, x) returns x
//                          when both are zero); x < 0 (-inf too) gives +0; NaN gives +0 and
//                          +inf gives 65504, both reported.
//   relu_backward(g, s):   s <= 0 (+-0, negatives, -inf) gives +0; otherwise g (NaN in s
//                          compares false, so it passes g), stored saturating.
//   masked_fill(x, mask, fill): fill where the mask is set, else x stored saturating; the
//                          mask (bytes, 0 or 1) holds `period` entries and repeats along x
//                          (a mask broadcast over x's leading dimensions: attention's causal
//                          mask over batches and heads); n is a multiple of period. `fill` is
//                          the fill value as the caller rounded it, stored as given.
// Each returns true when something was reported (the caller raises the device float status).
// An output may be one of the inputs (in place); other overlaps are not allowed.
#include <cstddef>
#include <cstdint>

#include "exec/half.h"

namespace apexnpu::rt {

bool saturate_half(const half_bits* in, half_bits* out, std::size_t n);
bool add_half(const half_bits* a, const half_bits* b, half_bits* out, std::size_t n);
bool multiply_half(const half_bits* in, half_bits* out, std::size_t n, float factor);
bool divide_half(const half_bits* in, half_bits* out, std::size_t n, float divisor);
bool relu_half(const half_bits* in, half_bits* out, std::size_t n);
bool relu_backward_half(const half_bits* grad, const half_bits* self, half_bits* out, std::size_t n);
bool masked_fill_half(const half_bits* in, const std::uint8_t* mask, std::size_t period, half_bits* out,
                      std::size_t n, half_bits fill);

}  // namespace apexnpu::rt
