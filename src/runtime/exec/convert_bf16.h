#pragma once
// Whole-buffer bf16 <-> fp32 conversion (exec/bf16.h's rules), dispatched to the active ISA level
// and spread over the thread pool.
#include <cstddef>

#include "exec/bf16.h"

namespace apexnpu::rt {

void convert_bf16_to_float(const bf16_bits* in, float* out, std::size_t n);
// Returns true if a value was reported (saturation mode only: NaN or beyond the bf16 range); the
// caller raises the float status.
bool convert_float_to_bf16(const float* in, bf16_bits* out, std::size_t n, Bf16Mode mode);

}  // namespace apexnpu::rt
