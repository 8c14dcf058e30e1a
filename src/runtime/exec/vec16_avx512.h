#pragma once
// exec/vec16.h's representation at x86-64's avx512 level: one __m512, masked tails.
#include <immintrin.h>

#include "exec/half_simd.h"
#include "exec/vec16_blocks.h"

namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd {

struct V16 {
  __m512 r;
  V16() = default;
  explicit V16(__m512 v) : r(v) {}
  explicit V16(float s) : r(_mm512_set1_ps(s)) {}
};
inline __mmask16 lane_mask(Tail t) { return static_cast<__mmask16>((1u << t.count) - 1u); }
inline V16 load(const float* p, Full) { return V16(_mm512_loadu_ps(p)); }
inline V16 load(const float* p, Tail t) { return V16(_mm512_maskz_loadu_ps(lane_mask(t), p)); }
inline void store(float* p, V16 v, Full) { _mm512_storeu_ps(p, v.r); }
inline void store(float* p, V16 v, Tail t) { _mm512_mask_storeu_ps(p, lane_mask(t), v.r); }
inline V16 operator+(V16 a, V16 b) { return V16(_mm512_add_ps(a.r, b.r)); }
inline V16 operator-(V16 a, V16 b) { return V16(_mm512_sub_ps(a.r, b.r)); }
inline V16 operator*(V16 a, V16 b) { return V16(_mm512_mul_ps(a.r, b.r)); }
inline V16 operator/(V16 a, V16 b) { return V16(_mm512_div_ps(a.r, b.r)); }
inline V16 sqrt(V16 a) { return V16(_mm512_sqrt_ps(a.r)); }
// max(a, b) with torch.maximum's result for ordered values (a NaN in `a` yields b).
inline V16 max(V16 a, V16 b) { return V16(_mm512_max_ps(a.r, b.r)); }
inline V16 live(V16 v, Full) { return v; }
inline V16 live(V16 v, Tail t) { return V16(_mm512_maskz_mov_ps(lane_mask(t), v.r)); }

// Lanes holding inf or NaN, OR-accumulated.
struct BadLanes {
  __mmask16 m = 0;
  bool any() const { return m != 0; }
};
inline void check_finite(V16 v, BadLanes& bad) {
  bad.m |= _mm512_cmp_ps_mask(_mm512_abs_ps(v.r), _mm512_set1_ps(__builtin_inff()), _CMP_NLT_UQ);
}
inline void store_half(half_bits* p, V16 v, Full, BadLanes& bad) { store_half16(p, v.r, bad.m); }

// 16 lanes widened to double (exact), and 16 double accumulators.
struct W16 {
  __m512d lo, hi;
};
inline W16 widen(V16 a) {
  return {_mm512_cvtps_pd(_mm512_castps512_ps256(a.r)),
          _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a.r), 1)))};
}
struct D16 {
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
};
inline void add_product(D16& acc, const W16& a, const W16& b) {
  acc.lo = _mm512_add_pd(acc.lo, _mm512_mul_pd(a.lo, b.lo));
  acc.hi = _mm512_add_pd(acc.hi, _mm512_mul_pd(a.hi, b.hi));
}
inline void add(D16& acc, const W16& a) {
  acc.lo = _mm512_add_pd(acc.lo, a.lo);
  acc.hi = _mm512_add_pd(acc.hi, a.hi);
}
inline void lanes_of(const D16& acc, double out[16]) {
  _mm512_storeu_pd(out, acc.lo);
  _mm512_storeu_pd(out + 8, acc.hi);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd
