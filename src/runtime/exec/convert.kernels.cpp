// Per-ISA bodies of exec/convert.h.
#include "exec/half_simd.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

void convert_half_to_float_range(const half_bits* in, float* out, std::size_t n) {
  half_to_float_n(in, out, n);
}

bool convert_float_to_half_range(const float* in, half_bits* out, std::size_t n) {
  return float_to_half_n(in, out, n);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
