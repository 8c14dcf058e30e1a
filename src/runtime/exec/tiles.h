#pragma once
// The one-pass loop of every kernel that computes 16-bit values in fp32: a tile of values is
// widened into a float array on the stack, computed on there, and narrowed back, so memory is
// read and written once whatever the computation. A codec says how one 16-bit format widens and
// narrows (HalfCodec in exec/half_simd.h, Bf16Codec in exec/bf16_simd.h):
//   static void widen(const T* in, float* out, std::size_t n);
//   bool narrow(const float* in, T* out, std::size_t n) const;   // true if any was reported
#include <cstddef>

#include "exec/isa.h"

#if !defined(APEXNPU_ISA_LEVEL)
#error "exec/tiles.h is for *.kernels.cpp files (compiled with APEXNPU_ISA_LEVEL)"
#endif

namespace apexnpu::rt::APEXNPU_ISA_NS {

// Values per tile: a multiple of every vector width, small enough for two tiles in L1.
inline constexpr std::size_t kTile = 256;

// out[i] = in[i] after compute(tile, len) has rewritten the widened tile; out may be in.
// Returns true if narrowing reported any value.
template <typename Codec, typename T, typename Compute>
bool map_tiles(const Codec& codec, const T* in, T* out, std::size_t n, Compute compute) {
  bool bad = false;
  float tile[kTile];
  for (std::size_t i = 0; i < n; i += kTile) {
    const std::size_t len = n - i < kTile ? n - i : kTile;
    Codec::widen(in + i, tile, len);
    compute(tile, len);
    bad |= codec.narrow(tile, out + i, len);
  }
  return bad;
}

// out[i] = op(a[i], b[i]) computed in fp32; out may be a or b. True if any value was reported.
template <typename Codec, typename T, typename Op>
bool zip_tiles(const Codec& codec, const T* a, const T* b, T* out, std::size_t n, Op op) {
  bool bad = false;
  float ta[kTile];
  float tb[kTile];
  for (std::size_t i = 0; i < n; i += kTile) {
    const std::size_t len = n - i < kTile ? n - i : kTile;
    Codec::widen(a + i, ta, len);
    Codec::widen(b + i, tb, len);
    for (std::size_t k = 0; k < len; ++k) ta[k] = op(ta[k], tb[k]);
    bad |= codec.narrow(ta, out + i, len);
  }
  return bad;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
