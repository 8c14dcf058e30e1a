#pragma once
// fp16 <-> fp32 conversion, scalar reference (usable anywhere). The vectorised versions for
// kernel files are in exec/half_simd.h; both give bit-identical results.
//
// fp32 -> fp16 follows the NPU's saturation mode (the NPU stores no fp16 inf or NaN):
//   - finite |x| <= 65504: round to nearest, ties to even (IEEE), subnormals included;
//   - |x| > 65504 (including inf, and values such as 65520 that IEEE would round to inf):
//     stores +-65504 (0x7BFF / 0xFBFF) and reports overflow;
//   - NaN: stores +0 (0x0000) and reports overflow.
// "Reports overflow" means the caller ORs it into the device float status.
// fp16 -> fp32 is exact (fp16 inf/NaN, which only foreign buffers can hold, map to inf / quiet NaN).
#include <bit>
#include <cstdint>

namespace apexnpu::rt {

using half_bits = std::uint16_t;  // an IEEE binary16 value, as stored

inline constexpr half_bits kHalfMaxBits = 0x7BFF;  // 65504
inline constexpr float kHalfMax = 65504.0f;

constexpr float half_to_float(half_bits h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  std::uint32_t mantissa = h & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1F) {
    // inf / NaN; NaNs come out quiet with their payload, as F16C/AVX-512 convert them.
    bits = sign | 0x7F800000u | (mantissa << 13) | (mantissa != 0 ? 0x400000u : 0u);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    std::uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

// Saturating conversion; sets `overflow` to true (never to false) on |x| > 65504 or NaN.
constexpr half_bits float_to_half(float value, bool& overflow) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<half_bits>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {  // NaN
    overflow = true;
    return 0;
  }
  if (magnitude > 0x477FE000u) {  // beyond 65504, inf included
    overflow = true;
    return static_cast<half_bits>(sign | kHalfMaxBits);
  }
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent >= 113) {  // normal half: drop 13 mantissa bits, round to nearest even
    std::uint32_t h = ((exponent - 112) << 10) | ((magnitude >> 13) & 0x3FFu);
    const std::uint32_t rest = magnitude & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carry may bump the exponent
    return static_cast<half_bits>(sign | h);
  }
  // Subnormal half (or zero): value = m * 2^(exponent - 150), unit 2^-24.
  if (exponent < 102) return sign;  // below 2^-25: rounds to zero (2^-25 itself ties to 0)
  const std::uint32_t m = (magnitude & 0x7FFFFFu) | (exponent != 0 ? 0x800000u : 0u);
  const std::uint32_t shift = 126 - exponent;  // 14 .. 24
  std::uint32_t h = m >> shift;
  const std::uint32_t rest = m & ((1u << shift) - 1);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
  return static_cast<half_bits>(sign | h);
}

// Saturating conversion of a single value without reporting (for constants known in range).
constexpr half_bits float_to_half(float value) noexcept {
  bool ignored = false;
  return float_to_half(value, ignored);
}

}  // namespace apexnpu::rt
