#pragma once
// Multiplying gradients by a factor, per ISA level (amp/scale.kernels.cpp): the loss scaler's
// unscale and clip_grad_norm's scaling both use them. Each returns true if a result is inf/NaN
// or, for fp16 output, saturated.
#include <cstddef>

#include "exec/half.h"
#include "exec/isa.h"

namespace apexnpu::rt {

// out[i] = in[i] * factor; out may equal in.
APEXNPU_ISA_DECLARE(bool, scale_f32, (const float* in, float* out, std::size_t n, float factor))
// fp16 in; the result goes to out16 (may equal in) or, when out16 is null, to out32 as fp32.
APEXNPU_ISA_DECLARE(bool, scale_f16,
                    (const half_bits* in, half_bits* out16, float* out32, std::size_t n, float factor))

}  // namespace apexnpu::rt
