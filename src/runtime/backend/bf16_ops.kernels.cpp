// Per-ISA bodies of backend/bf16_ops.h: tiles widened with exec/bf16_simd.h, computed in fp32 and
// narrowed in the chip's mode, as exact at every level as the conversions themselves.
#include <cstddef>

#include "exec/bf16.h"
#include "exec/bf16_simd.h"
#include "exec/isa.h"
#include "exec/tiles.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

bool copy_bf16_range(const bf16_bits* in, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  return map_tiles(Bf16Codec{mode}, in, out, n, [](float*, std::size_t) {});
}

bool add_bf16_range(const bf16_bits* a, const bf16_bits* b, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  return zip_tiles(Bf16Codec{mode}, a, b, out, n, [](float x, float y) { return x + y; });
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
