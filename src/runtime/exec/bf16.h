#pragma once
// bf16 <-> fp32 conversion of the emulated 910B, scalar reference (usable anywhere). The
// whole-buffer, per-ISA versions are exec/convert_bf16.h; they give the same bits.
//
// bf16 -> fp32 is exact: the 16 bits are the top half of the float (a NaN keeps its bits, as
// torch widens it).
// fp32 -> bf16 rounds once to nearest, ties to even (subnormals included, never flushed), in
// the chip's overflow mode:
//   - INF/NAN mode (a 910B's default): IEEE; a value rounding beyond the largest bf16 gives inf,
//     and every NaN is stored as the default quiet NaN 0x7FC0. Which NaN an fp32 operation
//     returns when several come in (its sign, its payload) depends on the order in which a
//     compiler or a vector unit takes the operands, and torch's own conversions store NaN as
//     they like (0xFFFF in x86 vector code, 0x7FC0 in scalar code), so one pattern is stored for
//     them all: results are then the same bits whichever code computed them.
//   - saturation mode: |x| beyond the largest finite bf16 (0x7F7F, inf included) stores it with
//     x's sign, NaN stores +0, and both are reported (the caller raises the float status).
#include <bit>
#include <cstdint>

namespace apexnpu::rt {

using bf16_bits = std::uint16_t;  // a bfloat16 value, as stored

inline constexpr bf16_bits kBf16MaxBits = 0x7F7F;
inline constexpr bf16_bits kBf16DefaultNan = 0x7FC0;               // every NaN stored in INF/NAN mode
inline constexpr std::uint32_t kBf16MaxAsFloatBits = 0x7F7F0000u;  // the largest bf16, as fp32

// How fp32 values are stored as bf16 (the emulated chip's overflow mode).
enum class Bf16Mode : std::uint8_t { inf_nan, saturation };

constexpr float bf16_to_float(bf16_bits b) noexcept { return std::bit_cast<float>(std::uint32_t{b} << 16); }

// The fp32 pattern `bits` rounded to nearest even as bf16 bits (no NaN handling: callers
// select). A tie is the dropped half exactly 0x8000: adding 0x7FFF plus the kept low bit carries
// only past a tie with an odd kept part; a carry into the exponent is the correct rounding up.
constexpr std::uint32_t bf16_rounded(std::uint32_t bits) noexcept {
  return (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
}

// INF/NAN mode store.
constexpr bf16_bits float_to_bf16(float value) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return kBf16DefaultNan;
  return static_cast<bf16_bits>(bf16_rounded(bits));
}

// Saturation mode store; sets `overflow` to true (never to false) on NaN or |x| > 0x7F7F's value.
constexpr bf16_bits float_to_bf16_saturated(float value, bool& overflow) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {
    overflow = true;
    return 0;
  }
  if (magnitude > kBf16MaxAsFloatBits) {
    overflow = true;
    return static_cast<bf16_bits>(((bits >> 16) & 0x8000u) | kBf16MaxBits);
  }
  return static_cast<bf16_bits>(bf16_rounded(bits));
}

// The store of `mode`; `overflow` as float_to_bf16_saturated sets it (never in INF/NAN mode).
constexpr bf16_bits float_to_bf16(float value, Bf16Mode mode, bool& overflow) noexcept {
  return mode == Bf16Mode::saturation ? float_to_bf16_saturated(value, overflow) : float_to_bf16(value);
}

}  // namespace apexnpu::rt
