// Per-ISA body of backend/half_max_pool.h. Windows that lie inside the plane horizontally are
// done a block of outputs at a time: for each window position (in torch's scan order) the
// block's candidates are gathered into a row and compared with the block's maxima by
// branch-free selections that the compiler vectorises, instead of one dependent chain of
// unpredictable comparisons per window. Windows at the plane's left and right edges (padding)
// take the scalar scan. Selection only: every level gives the same bits and indices.
#include "backend/half_max_pool.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "exec/half.h"
#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {
namespace {

constexpr std::uint32_t kPoolMinusInf = 0xFC00;
constexpr std::int64_t kPoolBlock = 64;

// An integer that orders non-NaN halves as their values do (-0 and +0 equal).
inline std::int32_t pool_key(std::uint32_t h) noexcept {
  const auto magnitude = static_cast<std::int32_t>(h & 0x7FFFu);
  return (h & 0x8000u) ? -magnitude : magnitude;
}

inline std::uint32_t pool_nan(std::uint32_t h) noexcept { return (h & 0x7FFFu) > 0x7C00u; }

// The stored fp16 of a maximum: NaN -> +0, +-inf -> +-65504 (reported through `bad`).
inline half_bits pool_store(std::uint32_t bits, std::uint32_t& bad) noexcept {
  const std::uint32_t magnitude = bits & 0x7FFFu;
  const std::uint32_t special = magnitude >= 0x7C00u;
  bad |= special;
  const std::uint32_t saturated = magnitude > 0x7C00u ? 0u : ((bits & 0x8000u) | kHalfMaxBits);
  return static_cast<half_bits>(special ? saturated : bits);
}

// torch's scan of one window: from its first in-bounds element, take an element greater than
// the maximum or NaN; nothing compares greater than a NaN maximum.
void scan_window(const half_bits* in, const PoolGeometry& g, std::int64_t ih0, std::int64_t ih1,
                 std::int64_t ow, half_bits* out, std::int64_t* index_out, std::uint32_t& bad) {
  std::int64_t iw0 = ow * g.stride_w - g.pad_w;
  const std::int64_t iw1 = std::min(iw0 + (g.kernel_w - 1) * g.dilation_w + 1, g.in_w);
  while (iw0 < 0) iw0 += g.dilation_w;
  std::int64_t max_index = ih0 * g.in_w + iw0;
  std::uint32_t max_bits = kPoolMinusInf, max_nan = 0;
  std::int32_t max_key = pool_key(kPoolMinusInf);
  for (std::int64_t ih = ih0; ih < ih1; ih += g.dilation_h)
    for (std::int64_t iw = iw0; iw < iw1; iw += g.dilation_w) {
      const std::int64_t index = ih * g.in_w + iw;
      const std::uint32_t v = in[index];
      const std::uint32_t nan = pool_nan(v);
      const std::int32_t key = pool_key(v);
      const bool take = nan | ((max_nan ^ 1u) & static_cast<std::uint32_t>(key > max_key));
      max_bits = take ? v : max_bits;
      max_index = take ? index : max_index;
      max_nan = take ? nan : max_nan;
      max_key = take ? key : max_key;
    }
  *out = pool_store(max_bits, bad);
  *index_out = max_index;
}

// Outputs [first, last) of one output row, all windows inside the plane horizontally.
void scan_block(const half_bits* in, const PoolGeometry& g, std::int64_t ih0, std::int64_t ih1,
                std::int64_t first, std::int64_t last, half_bits* out, std::int64_t* indices,
                std::uint32_t& bad) {
  const std::int64_t n = last - first;
  std::int32_t max_key[kPoolBlock], key[kPoolBlock];
  std::uint32_t max_bits[kPoolBlock], max_nan[kPoolBlock], value[kPoolBlock];
  std::int32_t max_offset[kPoolBlock];                      // index minus the block's first window start
  const std::int64_t start = first * g.stride_w - g.pad_w;  // >= 0
  const std::int64_t origin = ih0 * g.in_w + start;
  for (std::int64_t j = 0; j < n; ++j) {
    max_key[j] = pool_key(kPoolMinusInf);
    max_bits[j] = kPoolMinusInf;
    max_nan[j] = 0;
    max_offset[j] = static_cast<std::int32_t>(j * g.stride_w);
  }
  for (std::int64_t ih = ih0; ih < ih1; ih += g.dilation_h)
    for (std::int64_t b = 0; b < g.kernel_w; ++b) {
      const std::int64_t column = start + b * g.dilation_w;
      const half_bits* row = in + ih * g.in_w + column;
      const auto base = static_cast<std::int32_t>(ih * g.in_w + column - origin);
      for (std::int64_t j = 0; j < n; ++j) value[j] = row[j * g.stride_w];
      for (std::int64_t j = 0; j < n; ++j) {
        const std::uint32_t v = value[j];
        const std::uint32_t nan = pool_nan(v);
        key[j] = pool_key(v);
        const std::uint32_t take =
            nan | ((max_nan[j] ^ 1u) & static_cast<std::uint32_t>(key[j] > max_key[j]));
        max_bits[j] = take ? v : max_bits[j];
        max_nan[j] = take ? nan : max_nan[j];
        max_key[j] = take ? key[j] : max_key[j];
        max_offset[j] = take ? base + static_cast<std::int32_t>(j * g.stride_w) : max_offset[j];
      }
    }
  for (std::int64_t j = 0; j < n; ++j) {
    out[j] = pool_store(max_bits[j], bad);
    indices[j] = origin + max_offset[j];
  }
}

}  // namespace

bool max_pool2d_half_plane(const half_bits* in, half_bits* out, std::int64_t* indices,
                           const PoolGeometry& geometry) {
  const PoolGeometry g = geometry;  // a copy: stores through `indices` cannot alias it
  std::uint32_t bad = 0;
  // Outputs whose window starts at or after column 0 and ends before column in_w.
  const std::int64_t reach = (g.kernel_w - 1) * g.dilation_w;
  std::int64_t inside_first = (g.pad_w + g.stride_w - 1) / g.stride_w;
  std::int64_t inside_last =
      g.in_w - 1 - reach + g.pad_w >= 0 ? (g.in_w - 1 - reach + g.pad_w) / g.stride_w + 1 : 0;
  inside_last = std::min(inside_last, g.out_w);
  inside_first = std::min(inside_first, inside_last);
  for (std::int64_t oh = 0; oh < g.out_h; ++oh) {
    std::int64_t ih0 = oh * g.stride_h - g.pad_h;
    const std::int64_t ih1 = std::min(ih0 + (g.kernel_h - 1) * g.dilation_h + 1, g.in_h);
    while (ih0 < 0) ih0 += g.dilation_h;
    half_bits* out_row = out + oh * g.out_w;
    std::int64_t* index_row = indices + oh * g.out_w;
    for (std::int64_t ow = 0; ow < inside_first; ++ow)
      scan_window(in, g, ih0, ih1, ow, out_row + ow, index_row + ow, bad);
    for (std::int64_t ow = inside_first; ow < inside_last; ow += kPoolBlock) {
      const std::int64_t last = std::min(ow + kPoolBlock, inside_last);
      scan_block(in, g, ih0, ih1, ow, last, out_row + ow, index_row + ow, bad);
    }
    for (std::int64_t ow = inside_last; ow < g.out_w; ++ow)
      scan_window(in, g, ih0, ih1, ow, out_row + ow, index_row + ow, bad);
  }
  return bad != 0;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
