#pragma once
// Branch-free inf/NaN detection that gcc vectorises as an OR reduction:
//   std::uint32_t acc = 0;  for (...) acc |= nonfinite_bits(x[i]);  bool bad = any_nonfinite(acc);
// Adding one exponent step to the exponent field carries into bit 31 only when the exponent is
// all ones (inf or NaN).
#include <bit>
#include <cstdint>

namespace apexnpu::rt {

inline std::uint32_t nonfinite_bits(float x) noexcept {
  return (std::bit_cast<std::uint32_t>(x) & 0x7F800000u) + 0x00800000u;
}
inline bool any_nonfinite(std::uint32_t acc) noexcept { return (acc & 0x80000000u) != 0; }

}  // namespace apexnpu::rt
