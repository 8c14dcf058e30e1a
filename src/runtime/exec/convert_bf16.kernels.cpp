// Per-ISA bodies of exec/convert_bf16.h.
#include "exec/bf16_simd.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

void convert_bf16_to_float_range(const bf16_bits* in, float* out, std::size_t n) { widen_bf16_n(in, out, n); }

bool convert_float_to_bf16_range(const float* in, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  return narrow_bf16_n(in, out, n, mode);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
