#pragma once
// bf16 <-> fp32 conversion for kernel files (*.kernels.cpp), in one pass over memory: exec/bf16.h's
// rules written as branch-free integer loops, which the compiler vectorises at every SIMD level
// of the file (avx2, avx512, neon; the scalar level is built without the vectoriser). Integer
// work gives the same bits at any level, so every level equals the scalar reference.
//
//   float tile[kBf16Tile];
//   widen_bf16_n(p + i, tile, len);
//   ... compute on tile in fp32 ...
//   bad |= narrow_bf16_n(tile, p + i, len, mode);   // saturation mode: true if any reported
#include <bit>
#include <cstddef>
#include <cstdint>

#include "exec/bf16.h"
#include "exec/isa.h"
#include "exec/tiles.h"

#if !defined(APEXNPU_ISA_LEVEL)
#error "exec/bf16_simd.h is for *.kernels.cpp files (compiled with APEXNPU_ISA_LEVEL)"
#endif

namespace apexnpu::rt::APEXNPU_ISA_NS {

// A tile length for the array form (a multiple of every vector width).
inline constexpr std::size_t kBf16Tile = 256;

// out[i] = in[i] as float, exact.
inline void widen_bf16_n(const bf16_bits* in, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(std::uint32_t{in[i]} << 16);
}

// INF/NAN mode: rounded to nearest even, every NaN stored as 0x7FC0.
inline void narrow_bf16_inf_nan_n(const float* in, bf16_bits* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(in[i]);
    // Magnitudes are below 2^31: the signed comparison vectorises at every level.
    const bool nan = static_cast<std::int32_t>(bits & 0x7FFFFFFFu) > 0x7F800000;
    out[i] = static_cast<bf16_bits>(nan ? std::uint32_t{kBf16DefaultNan} : bf16_rounded(bits));
  }
}

// Saturation mode: NaN -> +0, beyond the bf16 range -> +-0x7F7F, both reported (true). The
// selections are written as masks: gcc leaves nested conditional stores of this loop scalar.
inline bool narrow_bf16_saturated_n(const float* in, bf16_bits* out, std::size_t n) noexcept {
  std::int32_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(in[i]);
    const auto magnitude = static_cast<std::int32_t>(bits & 0x7FFFFFFFu);
    const std::int32_t nan = -static_cast<std::int32_t>(magnitude > 0x7F800000);  // all ones
    const std::int32_t big =
        -static_cast<std::int32_t>(magnitude > static_cast<std::int32_t>(kBf16MaxAsFloatBits));
    const std::uint32_t clamped = ((bits >> 16) & 0x8000u) | kBf16MaxBits;
    const std::uint32_t kept =
        (bf16_rounded(bits) & ~static_cast<std::uint32_t>(big)) | (clamped & static_cast<std::uint32_t>(big));
    out[i] = static_cast<bf16_bits>(kept & ~static_cast<std::uint32_t>(nan));
    bad |= big;  // NaN is beyond the range too
  }
  return bad != 0;
}

inline bool narrow_bf16_n(const float* in, bf16_bits* out, std::size_t n, Bf16Mode mode) noexcept {
  if (mode == Bf16Mode::saturation) return narrow_bf16_saturated_n(in, out, n);
  narrow_bf16_inf_nan_n(in, out, n);
  return false;
}

// bf16 for exec/tiles.h: exact widening, narrowing in the chip's mode.
struct Bf16Codec {
  Bf16Mode mode;
  static void widen(const bf16_bits* in, float* out, std::size_t n) noexcept { widen_bf16_n(in, out, n); }
  bool narrow(const float* in, bf16_bits* out, std::size_t n) const noexcept {
    return narrow_bf16_n(in, out, n, mode);
  }
};

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
