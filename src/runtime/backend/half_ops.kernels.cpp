// Per-ISA bodies of backend/half_ops.h. The selections are branch-free loops on 16-bit
// patterns, which the compiler vectorises at every SIMD level (integer work gives the same bits
// at any level); add widens tiles with exec/half_simd.h, adds in fp32 and narrows with the
// saturating conversion, as exact at every level as the conversions themselves; multiply and
// divide do the same with one operand fixed.
#include <cstddef>
#include <cstdint>

#include "exec/half.h"
#include "exec/half_simd.h"
#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

namespace {

// The fp16 pattern h stored saturating (NaN -> +0, +-inf -> +-65504); `special` is 1 when h
// was NaN or inf. Branch-free, so the loops calling it vectorise.
inline std::uint32_t saturated(std::uint32_t h, unsigned& special) {
  const std::uint32_t magnitude = h & 0x7FFFu;
  const unsigned nan = magnitude > 0x7C00u;
  const unsigned inf = magnitude == 0x7C00u;
  special = nan | inf;
  return nan ? 0u : (inf ? (h & 0x8000u) | kHalfMaxBits : h);
}

}  // namespace

bool saturate_half_range(const half_bits* in, half_bits* out, std::size_t n) {
  unsigned bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned special = 0;
    out[i] = static_cast<half_bits>(saturated(in[i], special));
    bad |= special;
  }
  return bad != 0;
}

bool add_half_range(const half_bits* a, const half_bits* b, half_bits* out, std::size_t n) {
  return binary_half_n(a, b, out, n, [](float x, float y) { return x + y; });
}

namespace {

// out = op(float(in), operand) per element, stored saturating; true if anything was reported.
template <typename Op>
bool with_scalar(const half_bits* in, half_bits* out, std::size_t n, float operand, Op op) {
  return map_tiles(HalfCodec{}, in, out, n, [&](float* tile, std::size_t len) {
    for (std::size_t k = 0; k < len; ++k) tile[k] = op(tile[k], operand);
  });
}

}  // namespace

bool multiply_half_range(const half_bits* in, half_bits* out, std::size_t n, float factor) {
  return with_scalar(in, out, n, factor, [](float x, float f) { return x * f; });
}

bool divide_half_range(const half_bits* in, half_bits* out, std::size_t n, float divisor) {
  return with_scalar(in, out, n, divisor, [](float x, float d) { return x / d; });
}

bool relu_half_range(const half_bits* in, half_bits* out, std::size_t n) {
  unsigned bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t h = in[i];
    const unsigned nan = (h & 0x7FFFu) > 0x7C00u;
    const unsigned plus_inf = h == 0x7C00u;
    const unsigned negative = h > 0x8000u;  // sign set and not -0 (-inf and -NaN included)
    const std::uint32_t r = (negative | nan) ? 0u : (plus_inf ? std::uint32_t{kHalfMaxBits} : h);
    out[i] = static_cast<half_bits>(r);
    bad |= nan | plus_inf;
  }
  return bad != 0;
}

bool relu_backward_half_range(const half_bits* grad, const half_bits* self, half_bits* out, std::size_t n) {
  unsigned bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t s = self[i];
    const unsigned at_most_zero = s == 0u || (s >= 0x8000u && s <= 0xFC00u);
    unsigned special = 0;
    const std::uint32_t passed = saturated(grad[i], special);
    out[i] = static_cast<half_bits>(at_most_zero ? 0u : passed);
    bad |= special & (at_most_zero ^ 1u);
  }
  return bad != 0;
}

// Element k of this range is element `first + k` of the tensor; its mask entry is
// mask[(first + k) % period]. Runs of the mask are walked as plain loops, so they vectorise.
bool masked_fill_half_range(const half_bits* in, const std::uint8_t* mask, std::size_t period,
                            std::size_t first, half_bits* out, std::size_t n, half_bits fill) {
  unsigned bad = 0;
  std::size_t k = 0;
  std::size_t j = first % period;
  while (k < n) {
    const std::size_t len = n - k < period - j ? n - k : period - j;
    const half_bits* x = in + k;
    const std::uint8_t* m = mask + j;
    half_bits* o = out + k;
    for (std::size_t i = 0; i < len; ++i) {
      unsigned special = 0;
      const std::uint32_t kept = saturated(x[i], special);
      const unsigned selected = m[i] != 0;
      o[i] = static_cast<half_bits>(selected ? std::uint32_t{fill} : kept);
      bad |= special & (selected ^ 1u);
    }
    k += len;
    j = 0;
  }
  return bad != 0;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
