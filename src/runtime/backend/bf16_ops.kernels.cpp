// Per-ISA bodies of backend/bf16_ops.h: tiles widened with exec/bf16_simd.h, computed in fp32 and
// narrowed in the chip's mode, as exact at every level as the conversions themselves.
#include <cstddef>

#include "exec/bf16.h"
#include "exec/bf16_simd.h"
#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

bool copy_bf16_range(const bf16_bits* in, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  bool bad = false;
  float tile[kBf16Tile];
  for (std::size_t i = 0; i < n; i += kBf16Tile) {
    const std::size_t len = n - i < kBf16Tile ? n - i : kBf16Tile;
    widen_bf16_n(in + i, tile, len);
    bad |= narrow_bf16_n(tile, out + i, len, mode);
  }
  return bad;
}

bool add_bf16_range(const bf16_bits* a, const bf16_bits* b, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  bool bad = false;
  float ta[kBf16Tile];
  float tb[kBf16Tile];
  for (std::size_t i = 0; i < n; i += kBf16Tile) {
    const std::size_t len = n - i < kBf16Tile ? n - i : kBf16Tile;
    widen_bf16_n(a + i, ta, len);
    widen_bf16_n(b + i, tb, len);
    for (std::size_t k = 0; k < len; ++k) ta[k] = ta[k] + tb[k];
    bad |= narrow_bf16_n(ta, out + i, len, mode);
  }
  return bad;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
