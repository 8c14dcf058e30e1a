#pragma once
// exec/vec16.h's representation at x86-64's avx2 level: two __m256 (lanes 0-7, 8-15), tails
// through maskload/maskstore.
#include <immintrin.h>

#include "exec/half_simd.h"
#include "exec/vec16_blocks.h"

namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd {

struct V16 {
  __m256 lo, hi;
  V16() = default;
  V16(__m256 l, __m256 h) : lo(l), hi(h) {}
  explicit V16(float s) : lo(_mm256_set1_ps(s)), hi(_mm256_set1_ps(s)) {}
};
// Lane masks for maskload/maskstore: lane k live when k < count.
inline void lane_masks(Tail t, __m256i& lo, __m256i& hi) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i count = _mm256_set1_epi32(static_cast<int>(t.count));
  lo = _mm256_cmpgt_epi32(count, index);
  hi = _mm256_cmpgt_epi32(count, _mm256_add_epi32(index, _mm256_set1_epi32(8)));
}
inline V16 load(const float* p, Full) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
inline V16 load(const float* p, Tail t) {
  __m256i lo, hi;
  lane_masks(t, lo, hi);
  return {_mm256_maskload_ps(p, lo), _mm256_maskload_ps(p + 8, hi)};
}
inline void store(float* p, V16 v, Full) {
  _mm256_storeu_ps(p, v.lo);
  _mm256_storeu_ps(p + 8, v.hi);
}
inline void store(float* p, V16 v, Tail t) {
  __m256i lo, hi;
  lane_masks(t, lo, hi);
  _mm256_maskstore_ps(p, lo, v.lo);
  _mm256_maskstore_ps(p + 8, hi, v.hi);
}
inline V16 operator+(V16 a, V16 b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
inline V16 operator-(V16 a, V16 b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
inline V16 operator*(V16 a, V16 b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
inline V16 operator/(V16 a, V16 b) { return {_mm256_div_ps(a.lo, b.lo), _mm256_div_ps(a.hi, b.hi)}; }
inline V16 sqrt(V16 a) { return {_mm256_sqrt_ps(a.lo), _mm256_sqrt_ps(a.hi)}; }
inline V16 max(V16 a, V16 b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
inline V16 live(V16 v, Full) { return v; }
inline V16 live(V16 v, Tail t) {
  __m256i lo, hi;
  lane_masks(t, lo, hi);
  return {_mm256_and_ps(v.lo, _mm256_castsi256_ps(lo)), _mm256_and_ps(v.hi, _mm256_castsi256_ps(hi))};
}

struct BadLanes {
  __m256 m = _mm256_setzero_ps();
  bool any() const { return _mm256_movemask_ps(m) != 0; }
};
inline void check_finite(V16 v, BadLanes& bad) {
  const __m256 inf = _mm256_set1_ps(__builtin_inff());
  const __m256 sign = _mm256_set1_ps(-0.0f);
  bad.m = _mm256_or_ps(bad.m, _mm256_cmp_ps(_mm256_andnot_ps(sign, v.lo), inf, _CMP_NLT_UQ));
  bad.m = _mm256_or_ps(bad.m, _mm256_cmp_ps(_mm256_andnot_ps(sign, v.hi), inf, _CMP_NLT_UQ));
}
inline void store_half(half_bits* p, V16 v, Full, BadLanes& bad) {
  store_half8(p, v.lo, bad.m);
  store_half8(p + 8, v.hi, bad.m);
}

struct W16 {
  __m256d a, b, c, d;
};
inline W16 widen(V16 x) {
  return {_mm256_cvtps_pd(_mm256_castps256_ps128(x.lo)), _mm256_cvtps_pd(_mm256_extractf128_ps(x.lo, 1)),
          _mm256_cvtps_pd(_mm256_castps256_ps128(x.hi)), _mm256_cvtps_pd(_mm256_extractf128_ps(x.hi, 1))};
}
struct D16 {
  __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd(), c = _mm256_setzero_pd(), d = _mm256_setzero_pd();
};
inline void add_product(D16& acc, const W16& x, const W16& y) {
  acc.a = _mm256_add_pd(acc.a, _mm256_mul_pd(x.a, y.a));
  acc.b = _mm256_add_pd(acc.b, _mm256_mul_pd(x.b, y.b));
  acc.c = _mm256_add_pd(acc.c, _mm256_mul_pd(x.c, y.c));
  acc.d = _mm256_add_pd(acc.d, _mm256_mul_pd(x.d, y.d));
}
inline void add(D16& acc, const W16& x) {
  acc.a = _mm256_add_pd(acc.a, x.a);
  acc.b = _mm256_add_pd(acc.b, x.b);
  acc.c = _mm256_add_pd(acc.c, x.c);
  acc.d = _mm256_add_pd(acc.d, x.d);
}
inline void lanes_of(const D16& acc, double out[16]) {
  _mm256_storeu_pd(out, acc.a);
  _mm256_storeu_pd(out + 4, acc.b);
  _mm256_storeu_pd(out + 8, acc.c);
  _mm256_storeu_pd(out + 12, acc.d);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd
