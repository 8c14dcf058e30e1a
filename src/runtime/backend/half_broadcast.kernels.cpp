// Per-ISA bodies of backend/half_broadcast.h. A range is walked in tiles of the first operand,
// widened with exec/half_simd.h; each tile of b's values is filled run by run along b's
// innermost dimension (a run of memory, one value repeated where b is broadcast along it, or a
// gather), then the tile is computed in fp32 and narrowed with the saturating conversion: as
// exact at every level as the conversions themselves. A b much smaller than the range (a row of
// weights, cos of rotary) is widened once, so its short runs are float copies.
#include "backend/half_broadcast.h"

#include <cstddef>
#include <vector>

#include "exec/half.h"
#include "exec/half_simd.h"
#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

namespace {

// Where the walk over b's dimensions stands: the multi-index of the next element and b's offset
// for it.
class BroadcastCursor {
 public:
  BroadcastCursor(const BroadcastDim* dims, std::size_t count, std::size_t first)
      : dims_(dims), last_(count - 1) {
    for (std::size_t k = count; k-- > 0;) {
      index_[k] = first % dims[k].size;
      first /= dims[k].size;
      offset_ += index_[k] * dims[k].stride;
    }
  }

  std::size_t offset() const { return offset_; }
  std::size_t inner_stride() const { return dims_[last_].stride; }
  // Elements left before the innermost index wraps.
  std::size_t run_left() const { return dims_[last_].size - index_[last_]; }

  // Steps `run` (at most run_left()) elements on, carrying into the outer dimensions.
  void advance(std::size_t run) {
    index_[last_] += run;
    offset_ += run * dims_[last_].stride;
    for (std::size_t k = last_; k > 0 && index_[k] == dims_[k].size; --k) {
      offset_ -= dims_[k].size * dims_[k].stride;
      index_[k] = 0;
      ++index_[k - 1];
      offset_ += dims_[k - 1].stride;
    }
  }

 private:
  const BroadcastDim* dims_;
  std::size_t last_;
  std::size_t index_[kMaxBroadcastDims] = {};
  std::size_t offset_ = 0;
};

// `len` values `stride` elements apart from `at`, as floats: b's fp16 values, widened.
inline void load_half_run(const half_bits* at, std::size_t stride, float* tile, std::size_t len) {
  if (stride == 1) {
    half_to_float_n(at, tile, len);
  } else if (stride == 0) {
    const float value = half_to_float(*at);
    for (std::size_t k = 0; k < len; ++k) tile[k] = value;
  } else {
    for (std::size_t k = 0; k < len; ++k) tile[k] = half_to_float(at[k * stride]);
  }
}

// The same from b widened beforehand.
inline void load_float_run(const float* at, std::size_t stride, float* tile, std::size_t len) {
  if (stride == 1) {
    for (std::size_t k = 0; k < len; ++k) tile[k] = at[k];
  } else if (stride == 0) {
    const float value = *at;
    for (std::size_t k = 0; k < len; ++k) tile[k] = value;
  } else {
    for (std::size_t k = 0; k < len; ++k) tile[k] = at[k * stride];
  }
}

// out[i] = op(a[i], b at the cursor) for the range's n elements; b's values come from `b`
// (fp16 memory or b widened), read by `load`.
template <typename Source, typename Load, typename Op>
bool broadcast_tiles(const half_bits* a, const Source* b, BroadcastCursor& at, half_bits* out, std::size_t n,
                     Load load, Op op) {
  bool bad = false;
  float ta[kHalfTile];
  float tb[kHalfTile];
  const std::size_t stride = at.inner_stride();
  for (std::size_t i = 0; i < n; i += kHalfTile) {
    const std::size_t len = n - i < kHalfTile ? n - i : kHalfTile;
    half_to_float_n(a + i, ta, len);
    for (std::size_t filled = 0; filled < len;) {
      const std::size_t run = at.run_left() < len - filled ? at.run_left() : len - filled;
      load(b + at.offset(), stride, tb + filled, run);
      filled += run;
      at.advance(run);
    }
    for (std::size_t k = 0; k < len; ++k) ta[k] = op(ta[k], tb[k]);
    bad |= float_to_half_n(ta, out + i, len);
  }
  return bad;
}

// Elements [first, first + n) of the broadcast: a and out start at element `first`.
template <typename Op>
bool broadcast_range(const half_bits* a, const half_bits* b, const BroadcastDim* dims, std::size_t count,
                     std::size_t first, half_bits* out, std::size_t n, Op op) {
  if (count == 1 && dims[0].stride == 1) {  // one shape: both read as runs of memory
    return binary_half_n(a, b + first, out, n, op);
  }
  BroadcastCursor at(dims, count, first);
  // The span of b's memory the layout reaches: every address in it lies in b's storage.
  std::size_t extent = 1;
  for (std::size_t k = 0; k < count; ++k) extent += (dims[k].size - 1) * dims[k].stride;
  if (extent * 4 <= n) {  // b read over and over: widen it once
    std::vector<float> wide(extent);
    half_to_float_n(b, wide.data(), extent);
    return broadcast_tiles(a, wide.data(), at, out, n, load_float_run, op);
  }
  return broadcast_tiles(a, b, at, out, n, load_half_run, op);
}

}  // namespace

bool binary_half_broadcast_range(HalfBinaryOp op, const half_bits* a, const half_bits* b,
                                 const BroadcastDim* dims, std::size_t count, std::size_t first,
                                 half_bits* out, std::size_t n) {
  switch (op) {
    case HalfBinaryOp::add:
      return broadcast_range(a, b, dims, count, first, out, n, [](float x, float y) { return x + y; });
    case HalfBinaryOp::multiply:
      return broadcast_range(a, b, dims, count, first, out, n, [](float x, float y) { return x * y; });
  }
  return false;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
