#pragma once
// fp16 <-> fp32 conversion for kernel files (*.kernels.cpp), vectorised for the level the file
// is being compiled for: F16C at avx2, AVX-512 at avx512, the scalar reference at scalar.
// Bit-identical to exec/half.h (saturation: |x| > 65504 -> +-65504, NaN -> +0, both reported).
//
// Two ways to use it inside `namespace apexnpu::rt::APEXNPU_ISA_NS`:
//  1. Array form, any n (e.g. stage a tile of fp16 values in a float array on the stack,
//     compute on it with plain loops, write it back; still one pass over memory):
//       float tile[kHalfTile];
//       half_to_float_n(p16 + i, tile, len);
//       ... update tile ...
//       overflow |= float_to_half_n(tile, p16 + i, len);   // true if any saturated or NaN
//  2. Register form for intrinsic code (avx2: 8 lanes, avx512: 16 lanes):
//       __m256 v = load_half8(p);  store_half8(p, v, bad);  // bad: __m256 mask, OR-accumulated
//       __m512 v = load_half16(p); store_half16(p, v, bad); // bad: __mmask16, OR-accumulated
#include <cstddef>
#include <cstdint>

#include "exec/half.h"
#include "exec/isa.h"

#if !defined(APEXNPU_ISA_LEVEL)
#error "exec/half_simd.h is for *.kernels.cpp files (compiled with APEXNPU_ISA_LEVEL)"
#endif
#if APEXNPU_ISA_LEVEL >= 1
#include <immintrin.h>
#endif

namespace apexnpu::rt::APEXNPU_ISA_NS {

// A convenient tile length for the array form (a multiple of every vector width).
inline constexpr std::size_t kHalfTile = 256;

#if APEXNPU_ISA_LEVEL >= 1
inline __m256 load_half8(const half_bits* p) noexcept {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
// Clamps to +-65504 (NaN -> 0), converts with round-to-nearest-even, stores 8 halves;
// ORs the lanes that were out of range or NaN into `bad`.
inline void store_half8(half_bits* p, __m256 v, __m256& bad) noexcept {
  const __m256 max = _mm256_set1_ps(kHalfMax);
  const __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
  bad = _mm256_or_ps(bad, _mm256_cmp_ps(magnitude, max, _CMP_NLE_UQ));  // > max, or NaN
  const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
  // max_ps/min_ps return the second operand when one is NaN; NaN lanes are zeroed after.
  __m256 clamped = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-kHalfMax)), max);
  clamped = _mm256_andnot_ps(nan, clamped);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(clamped, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
inline bool any_lane(__m256 mask) noexcept { return _mm256_movemask_ps(mask) != 0; }
#endif

#if APEXNPU_ISA_LEVEL >= 2
inline __m512 load_half16(const half_bits* p) noexcept {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline void store_half16(half_bits* p, __m512 v, __mmask16& bad) noexcept {
  const __m512 max = _mm512_set1_ps(kHalfMax);
  const __m512 magnitude = _mm512_abs_ps(v);
  bad |= _mm512_cmp_ps_mask(magnitude, max, _CMP_NLE_UQ);
  const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
  const __m512 clamped = _mm512_maskz_min_ps(
      ordered, _mm512_max_ps(v, _mm512_set1_ps(-kHalfMax)), max);  // NaN lanes -> 0
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      // The masked form: gcc 12 warns about the unmasked one's undefined source.
                      _mm512_mask_cvtps_ph(_mm256_setzero_si256(), 0xFFFF, clamped,
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#endif

// out[i] = in[i] as float, exact.
inline void half_to_float_n(const half_bits* in, float* out, std::size_t n) noexcept {
  std::size_t i = 0;
#if APEXNPU_ISA_LEVEL >= 2
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, load_half16(in + i));
#endif
#if APEXNPU_ISA_LEVEL >= 1
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load_half8(in + i));
#endif
  for (; i < n; ++i) out[i] = half_to_float(in[i]);
}

// out[i] = in[i] as saturated half; returns true if any value was beyond +-65504 or NaN.
inline bool float_to_half_n(const float* in, half_bits* out, std::size_t n) noexcept {
  std::size_t i = 0;
  bool overflow = false;
#if APEXNPU_ISA_LEVEL >= 2
  __mmask16 bad16 = 0;
  for (; i + 16 <= n; i += 16) store_half16(out + i, _mm512_loadu_ps(in + i), bad16);
  overflow |= bad16 != 0;
#endif
#if APEXNPU_ISA_LEVEL >= 1
  __m256 bad8 = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) store_half8(out + i, _mm256_loadu_ps(in + i), bad8);
  overflow |= any_lane(bad8);
#endif
  for (; i < n; ++i) out[i] = float_to_half(in[i], overflow);
  return overflow;
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
