// Per-ISA bodies of backend/half_broadcast.h. A range is walked as runs along b's innermost
// dimension; each run goes through tiles widened with exec/half_simd.h (b's values widened as
// well when they are a run of memory, one value repeated when b is broadcast along the run,
// gathered otherwise), computed in fp32 and narrowed with the saturating conversion: as exact
// at every level as the conversions themselves.
#include <cstddef>

#include "backend/half_broadcast.h"
#include "exec/half.h"
#include "exec/half_simd.h"
#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

namespace {

// b's `len` values from `at`, `stride` elements apart, as floats.
inline void widen_strided(const half_bits* at, std::size_t stride, float* tile, std::size_t len) {
  if (stride == 1) {
    half_to_float_n(at, tile, len);
  } else if (stride == 0) {
    const float value = half_to_float(*at);
    for (std::size_t k = 0; k < len; ++k) tile[k] = value;
  } else {
    for (std::size_t k = 0; k < len; ++k) tile[k] = half_to_float(at[k * stride]);
  }
}

// Elements [first, first + n) of the broadcast: a and out start at element `first`.
template <typename Op>
bool broadcast_range(const half_bits* a, const half_bits* b, const BroadcastDim* dims, std::size_t count,
                     std::size_t first, half_bits* out, std::size_t n, Op op) {
  // The multi-index of `first` and b's offset there.
  std::size_t index[kMaxBroadcastDims] = {};
  std::size_t offset = 0;
  std::size_t rest = first;
  for (std::size_t k = count; k-- > 0;) {
    index[k] = rest % dims[k].size;
    rest /= dims[k].size;
    offset += index[k] * dims[k].stride;
  }
  const std::size_t last = count - 1;
  const std::size_t inner_size = dims[last].size;
  const std::size_t inner_stride = dims[last].stride;
  bool bad = false;
  float ta[kHalfTile];
  float tb[kHalfTile];
  std::size_t done = 0;
  while (done < n) {
    const std::size_t run = inner_size - index[last] < n - done ? inner_size - index[last] : n - done;
    for (std::size_t i = 0; i < run; i += kHalfTile) {
      const std::size_t len = run - i < kHalfTile ? run - i : kHalfTile;
      half_to_float_n(a + done + i, ta, len);
      widen_strided(b + offset + i * inner_stride, inner_stride, tb, len);
      for (std::size_t k = 0; k < len; ++k) ta[k] = op(ta[k], tb[k]);
      bad |= float_to_half_n(ta, out + done + i, len);
    }
    done += run;
    // Step the multi-index past the run, carrying into outer dimensions.
    index[last] += run;
    offset += run * inner_stride;
    for (std::size_t k = last; k > 0 && index[k] == dims[k].size; --k) {
      offset -= dims[k].size * dims[k].stride;
      index[k] = 0;
      ++index[k - 1];
      offset += dims[k - 1].stride;
    }
  }
  return bad;
}

}  // namespace

bool binary_half_broadcast_range(HalfBinaryOp op, const half_bits* a, const half_bits* b, const BroadcastDim* dims,
                                 std::size_t count, std::size_t first, half_bits* out, std::size_t n) {
  switch (op) {
    case HalfBinaryOp::add:
      return broadcast_range(a, b, dims, count, first, out, n, [](float x, float y) { return x + y; });
    case HalfBinaryOp::multiply:
      return broadcast_range(a, b, dims, count, first, out, n, [](float x, float y) { return x * y; });
  }
  return false;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
