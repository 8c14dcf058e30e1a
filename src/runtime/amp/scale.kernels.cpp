// Per-ISA bodies of amp/scale_kernels.h: plain loops the compiler vectorises for the level, plus
// the fp16 conversions of exec/half_simd.h.
#include <cstddef>
#include <cstdint>

#include "amp/nonfinite.h"
#include "exec/half_simd.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

// out may equal in. Returns true if any result is inf/NaN.
bool scale_f32(const float* in, float* out, std::size_t n, float factor) {
  std::uint32_t acc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float y = in[i] * factor;
    out[i] = y;
    acc |= nonfinite_bits(y);
  }
  return any_nonfinite(acc);
}

// fp16 in; out16 (may equal in) or out32 receives the result. Returns true on inf/NaN or,
// for fp16 output, saturation.
bool scale_f16(const half_bits* in, half_bits* out16, float* out32, std::size_t n, float factor) {
  alignas(64) float tile[kHalfTile];
  std::uint32_t acc = 0;
  bool saturated = false;
  for (std::size_t start = 0; start < n; start += kHalfTile) {
    const std::size_t len = n - start < kHalfTile ? n - start : kHalfTile;
    float* dst = out32 != nullptr ? out32 + start : tile;
    half_to_float_n(in + start, dst, len);
    for (std::size_t i = 0; i < len; ++i) {
      const float y = dst[i] * factor;
      dst[i] = y;
      acc |= nonfinite_bits(y);
    }
    if (out32 == nullptr) saturated |= float_to_half_n(tile, out16 + start, len);
  }
  return any_nonfinite(acc) || saturated;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
