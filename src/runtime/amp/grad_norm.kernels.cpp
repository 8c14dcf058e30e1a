// Per-ISA bodies of amp/grad_norm.h. The L2 sum uses 16 fixed lanes (element i of an item goes
// to lane i % 16) and adds the lanes in order, so the result does not depend on the vector
// width; x*x is exact in double, so FMA contraction cannot change it either.
#include <bit>
#include <cstddef>
#include <cstdint>

#include "amp/nonfinite.h"
#include "amp/norm_partial.h"
#include "exec/half_simd.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {
namespace {

constexpr std::size_t kLanes = 16;

struct Lanes {
  double sum[kLanes] = {};
  std::uint32_t max_bits[kLanes] = {};
};

// n is a multiple of kLanes except on the last call for an item.
template <bool kL2>
inline void accumulate(Lanes& lanes, const float* x, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      if constexpr (kL2) {
        const double d = x[i + j];
        lanes.sum[j] += d * d;
      } else {
        const std::uint32_t b = std::bit_cast<std::uint32_t>(x[i + j]) & 0x7FFFFFFFu;
        lanes.max_bits[j] = b > lanes.max_bits[j] ? b : lanes.max_bits[j];
      }
    }
  }
  for (std::size_t j = 0; i < n; ++i, ++j) {
    if constexpr (kL2) {
      const double d = x[i];
      lanes.sum[j] += d * d;
    } else {
      const std::uint32_t b = std::bit_cast<std::uint32_t>(x[i]) & 0x7FFFFFFFu;
      lanes.max_bits[j] = b > lanes.max_bits[j] ? b : lanes.max_bits[j];
    }
  }
}

inline NormPartial finish(const Lanes& lanes) noexcept {
  NormPartial p{0.0, 0};
  for (std::size_t j = 0; j < kLanes; ++j) {
    p.sum_of_squares += lanes.sum[j];
    p.max_abs_bits = lanes.max_bits[j] > p.max_abs_bits ? lanes.max_bits[j] : p.max_abs_bits;
  }
  return p;
}

template <bool kL2>
NormPartial norm_f32_impl(const float* x, std::size_t n) noexcept {
  Lanes lanes;
  accumulate<kL2>(lanes, x, n);
  return finish(lanes);
}

template <bool kL2>
NormPartial norm_f16_impl(const half_bits* x, std::size_t n) noexcept {
  Lanes lanes;
  alignas(64) float tile[kHalfTile];  // a multiple of kLanes, so lanes line up across tiles
  for (std::size_t start = 0; start < n; start += kHalfTile) {
    const std::size_t len = n - start < kHalfTile ? n - start : kHalfTile;
    half_to_float_n(x + start, tile, len);
    accumulate<kL2>(lanes, tile, len);
  }
  return finish(lanes);
}

}  // namespace

NormPartial norm_partial_f32(const float* x, std::size_t n, bool l2) {
  return l2 ? norm_f32_impl<true>(x, n) : norm_f32_impl<false>(x, n);
}

NormPartial norm_partial_f16(const half_bits* x, std::size_t n, bool l2) {
  return l2 ? norm_f16_impl<true>(x, n) : norm_f16_impl<false>(x, n);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
