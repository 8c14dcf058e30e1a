#pragma once
// Whole-buffer fp16 <-> fp32 conversion, dispatched to the active ISA level and spread over
// the thread pool. For kernels that convert as part of their own pass use exec/half_simd.h.
#include <cstddef>

#include "exec/half.h"

namespace apexnpu::rt {

void convert_half_to_float(const half_bits* in, float* out, std::size_t n);
// Returns true if any value saturated or was NaN (the caller reports it to the float status).
bool convert_float_to_half(const float* in, half_bits* out, std::size_t n);

}  // namespace apexnpu::rt
