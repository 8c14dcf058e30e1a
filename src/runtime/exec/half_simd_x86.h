#pragma once
// fp16 <-> fp32 in x86-64 registers (the avx2 and avx512 levels; exec/half_simd.h includes it):
// F16C at avx2 (8 lanes), AVX-512 at avx512 (16 lanes), both converting with explicit
// round-to-nearest-even after clamping, bit-identical to exec/half.h.
#include <immintrin.h>

#include "exec/half.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

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

#if APEXNPU_ISA_USES_AVX512
inline __m512 load_half16(const half_bits* p) noexcept {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline void store_half16(half_bits* p, __m512 v, __mmask16& bad) noexcept {
  const __m512 max = _mm512_set1_ps(kHalfMax);
  const __m512 magnitude = _mm512_abs_ps(v);
  bad |= _mm512_cmp_ps_mask(magnitude, max, _CMP_NLE_UQ);
  const __mmask16 ordered = _mm512_cmp_ps_mask(v, v, _CMP_ORD_Q);
  const __m512 clamped =
      _mm512_maskz_min_ps(ordered, _mm512_max_ps(v, _mm512_set1_ps(-kHalfMax)), max);  // NaN lanes -> 0
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                      // The masked form: gcc 12 warns about the unmasked one's undefined source.
                      _mm512_mask_cvtps_ph(_mm256_setzero_si256(), 0xFFFF, clamped,
                                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
#endif

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
