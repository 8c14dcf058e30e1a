// Per-ISA bodies of backend/float_ops.h: branch-free loops on 32-bit patterns, which the
// compiler vectorises at every SIMD level (integer work gives the same bits at any level).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "amp/nonfinite.h"
#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

namespace {

constexpr std::uint32_t kFloatMaxPattern = 0x7F7FFFFFu;

inline std::uint32_t float_bits_of(const float* x) {
  std::uint32_t b;
  std::memcpy(&b, x, sizeof b);
  return b;
}

}  // namespace

bool has_nonfinite_float_range(const float* x, std::size_t n) {
  std::uint32_t acc = 0;
  for (std::size_t i = 0; i < n; ++i) acc |= nonfinite_bits(x[i]);
  return any_nonfinite(acc);
}

bool saturate_float_range(float* x, std::size_t n) {
  unsigned changed = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t b = float_bits_of(x + i);
    const std::uint32_t magnitude = b & 0x7FFFFFFFu;
    const unsigned nan = magnitude > 0x7F800000u;
    const unsigned inf = magnitude == 0x7F800000u;
    const std::uint32_t out = nan ? 0u : (inf ? (b & 0x80000000u) | kFloatMaxPattern : b);
    std::memcpy(x + i, &out, sizeof out);
    changed |= nan | inf;
  }
  return changed != 0;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
