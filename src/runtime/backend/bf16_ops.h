#pragma once
// bf16 operations of the emulated 910B done in one pass over bf16 memory. Each result is what
// the emulation's general path computes: torch's fp32 operation on the exact fp32 values of the
// inputs, stored back as bf16 in the chip's mode (exec/bf16.h), without the widening pass, the
// fp32 buffer and the narrowing pass.
//   copy(x):    x widened and stored again: the same bits, except that a NaN comes out quiet
//               (INF/NAN mode) or +0, and an inf +-0x7F7F (saturation mode, both reported).
//   add(a, b):  the fp32 sum a + b (one IEEE rounding), stored.
// Each returns true when something was reported (saturation mode only; the caller raises the
// device float status). An output may be one of the inputs (in place); other overlaps are not
// allowed.
#include <cstddef>

#include "exec/bf16.h"

namespace apexnpu::rt {

bool copy_bf16(const bf16_bits* in, bf16_bits* out, std::size_t n, Bf16Mode mode);
bool add_bf16(const bf16_bits* a, const bf16_bits* b, bf16_bits* out, std::size_t n, Bf16Mode mode);

}  // namespace apexnpu::rt
