#pragma once
// fp16 <-> fp32 conversion for kernel files (*.kernels.cpp), vectorised for the level the file
// is being compiled for: F16C at avx2, AVX-512 at avx512 (exec/half_simd_x86.h), FCVTL/FCVTN at
// aarch64's neon (exec/half_simd_neon.h), the scalar reference at scalar. Bit-identical to
// exec/half.h (saturation: |x| > 65504 -> +-65504, NaN -> +0, both reported).
//
// Two ways to use it inside `namespace apexnpu::rt::APEXNPU_ISA_NS`:
//  1. Array form, any n (e.g. stage a tile of fp16 values in a float array on the stack,
//     compute on it with plain loops, write it back; still one pass over memory):
//       float tile[kHalfTile];
//       half_to_float_n(p16 + i, tile, len);
//       ... update tile ...
//       overflow |= float_to_half_n(tile, p16 + i, len);   // true if any saturated or NaN
//  2. Register form for intrinsic code (avx2: 8 lanes, avx512: 16 lanes, neon: 2x4 lanes):
//       __m256 v = load_half8(p);  store_half8(p, v, bad);  // bad: __m256 mask, OR-accumulated
//       __m512 v = load_half16(p); store_half16(p, v, bad); // bad: __mmask16, OR-accumulated
//       float32x4x2_t v = load_half8(p); store_half8(p, lo, hi, bad);  // bad: uint32x4_t
#include <cstddef>
#include <cstdint>

#include "exec/half.h"
#include "exec/isa.h"
#include "exec/tiles.h"

#if !defined(APEXNPU_ISA_LEVEL)
#error "exec/half_simd.h is for *.kernels.cpp files (compiled with APEXNPU_ISA_LEVEL)"
#endif
#if APEXNPU_ISA_USES_AVX2
#include "exec/half_simd_x86.h"
#elif APEXNPU_ISA_USES_NEON
#include "exec/half_simd_neon.h"
#endif

namespace apexnpu::rt::APEXNPU_ISA_NS {

// A convenient tile length for the array form (a multiple of every vector width).
inline constexpr std::size_t kHalfTile = 256;

// out[i] = in[i] as float, exact.
inline void half_to_float_n(const half_bits* in, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
#if APEXNPU_ISA_USES_AVX512
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, load_half16(in + i));
#endif
#if APEXNPU_ISA_USES_AVX2
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load_half8(in + i));
#endif
#if APEXNPU_ISA_USES_NEON
  for (; i + 8 <= n; i += 8) vst1q_f32_x2(out + i, load_half8(in + i));
#endif
  for (; i < n; ++i) out[i] = half_to_float(in[i]);
}

// out[i] = in[i] as saturated half; returns true if any value was beyond +-65504 or NaN.
inline bool float_to_half_n(const float* in, half_bits* out, std::size_t n) noexcept {
  std::size_t i = 0;
  bool overflow = false;
#if APEXNPU_ISA_USES_AVX512
  __mmask16 bad16 = 0;
  for (; i + 16 <= n; i += 16) store_half16(out + i, _mm512_loadu_ps(in + i), bad16);
  overflow |= bad16 != 0;
#endif
#if APEXNPU_ISA_USES_AVX2
  __m256 bad8 = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) store_half8(out + i, _mm256_loadu_ps(in + i), bad8);
  overflow |= any_lane(bad8);
#endif
#if APEXNPU_ISA_USES_NEON
  uint32x4_t bad4 = vdupq_n_u32(0);
  for (; i + 8 <= n; i += 8) store_half8(out + i, vld1q_f32(in + i), vld1q_f32(in + i + 4), bad4);
  overflow |= any_lane(bad4);
#endif
  for (; i < n; ++i) out[i] = float_to_half(in[i], overflow);
  return overflow;
}

// fp16 for exec/tiles.h: exact widening, saturating narrowing.
struct HalfCodec {
  static void widen(const half_bits* in, float* out, std::size_t n) noexcept { half_to_float_n(in, out, n); }
  bool narrow(const float* in, half_bits* out, std::size_t n) const noexcept {
    return float_to_half_n(in, out, n);
  }
};

// out[i] = op(float(a[i]), float(b[i])) stored saturating, a tile at a time (the array form);
// true if any result was reported. out may be a or b itself.
template <typename Op>
bool binary_half_n(const half_bits* a, const half_bits* b, half_bits* out, std::size_t n, Op op) {
  return zip_tiles(HalfCodec{}, a, b, out, n, op);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
