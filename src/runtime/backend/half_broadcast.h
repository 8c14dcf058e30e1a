#pragma once
// fp16 sums and products of a tensor with a second operand broadcast along it, in one pass over
// fp16 memory: rotary embeddings' q * cos, RMSNorm's weight * x and x * rsqrt(mean) with their
// gradients, a bias added along rows. Each result is what the emulation's general path computes:
// torch's fp32 kernel on the exact fp32 values of both operands (one IEEE rounding), stored back
// as fp16 with saturation (exec/half.h: NaN -> +0, beyond +-65504 -> +-65504, both reported).
//
// `a` and `out` are read and written as one flat range of n elements (a dense tensor in its
// memory order). Operand b is any strided layout, read through `dims`: the n elements are
// counted as a row-major multi-index over dims (outermost first, the sizes multiplying to n),
// and element i of a pairs with b[sum over k of index_k * dims[k].stride]. A dimension b is
// broadcast along has stride 0. Examples, for a contiguous (B, H, T, d) tensor a:
//   b the same shape and contiguous:            {{B*H*T*d, 1}}
//   b of shape (T, d), cos of rotary:           {{B*H, 0}, {T*d, 1}}
//   b of shape (B, H, T, 1), a per-row factor:  {{B*H*T, 1}, {d, 0}}
// Both operations are commutative in IEEE arithmetic (NaNs aside, and NaN is stored as +0), so
// which of the two operands came first in torch's call does not change a bit.
// `out` may be `a` itself (in place); it must not otherwise overlap a or b. Each returns true
// when something was reported (the caller raises the device float status).
#include <cstddef>
#include <span>

#include "exec/half.h"

namespace apexnpu::rt {

struct BroadcastDim {
  std::size_t size;    // elements along this dimension
  std::size_t stride;  // elements of b between neighbours along it (0: broadcast)
};

// Dimensions a layout may have: torch's 8 after merging those that are one run of memory.
inline constexpr std::size_t kMaxBroadcastDims = 8;

enum class HalfBinaryOp { add, multiply };

// Throws ArgumentError unless dims holds 1 to kMaxBroadcastDims dimensions whose sizes multiply
// to n.
bool binary_half_broadcast(HalfBinaryOp op, const half_bits* a, const half_bits* b,
                           std::span<const BroadcastDim> dims, half_bits* out, std::size_t n);

}  // namespace apexnpu::rt
