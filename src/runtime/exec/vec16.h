#pragma once
// A 16-lane float vector for kernel files (*.kernels.cpp) of any folder: one __m512 at avx512,
// two __m256 at avx2, a gcc generic vector at scalar (lowered to the baseline ISA: SSE2
// on x86-64, NEON on aarch64; 16-float arrays cost 4x the compile time). Kernels are written
// once against it, a block of 16 elements at a time; every level computes each lane with the
// same IEEE operations in the same order (no FMA: the kernel files turn contraction off), so
// all levels give bit-identical results, reductions included (lane k always takes the elements
// k, k+16, ... of a range; Sum16 adds 4 blocks of products in fp32, then into 16 double
// accumulators; the lanes are added by a fixed tree at the end).
//
// Reductions: Sum16 s; add_product(s, x, y) per block; total(s) at the end.
//
//   for_blocks(begin, end, [&](std::size_t i, auto lanes) {   // lanes: Full or Tail
//     V16 p = load(a.p + i, lanes);
//     store(a.p + i, p * V16(2.0f), lanes);
//   });
#include <cstddef>
#include <cstring>

#include "exec/half_simd.h"
#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd {

struct Full {
  static constexpr unsigned count = 16;
};
struct Tail {
  unsigned count;  // 1 .. 15 live lanes; the others load as 0 and are never stored
};

// Runs body(i, Full{}) for each whole block of 16 in [begin, end), then body(i, Tail{n}).
template <typename Body>
inline void for_blocks(std::size_t begin, std::size_t end, Body&& body) {
  std::size_t i = begin;
  for (; i + 16 <= end; i += 16) body(i, Full{});
  if (i < end) body(i, Tail{static_cast<unsigned>(end - i)});
}

#if APEXNPU_ISA_LEVEL == 2

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

#elif APEXNPU_ISA_LEVEL == 1

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
  __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd(), c = _mm256_setzero_pd(),
          d = _mm256_setzero_pd();
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

#else  // baseline ISA: GCC generic vectors, lowered to whatever SIMD the baseline has (SSE2 on
      // x86-64, NEON on aarch64) or to scalar code. Element-wise IEEE operations, so the
      // results equal the other levels'; far cheaper to compile than 16-element arrays, which
      // gcc must unroll and split into scalars to make fast.

using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = int __attribute__((vector_size(64)));
using f64x8 = double __attribute__((vector_size(64)));

struct V16 {
  f32x16 r;
  V16() = default;
  explicit V16(f32x16 v) : r(v) {}
  explicit V16(float s) : r(f32x16{} + s) {}
};
inline V16 load(const float* p, Full) {
  V16 v;
  std::memcpy(&v.r, p, sizeof v.r);
  return v;
}
inline V16 load(const float* p, Tail t) {
  V16 v(0.0f);
  std::memcpy(&v.r, p, t.count * sizeof(float));
  return v;
}
inline void store(float* p, V16 v, Full) { std::memcpy(p, &v.r, sizeof v.r); }
inline void store(float* p, V16 v, Tail t) { std::memcpy(p, &v.r, t.count * sizeof(float)); }
inline V16 operator+(V16 a, V16 b) { return V16(a.r + b.r); }
inline V16 operator-(V16 a, V16 b) { return V16(a.r - b.r); }
inline V16 operator*(V16 a, V16 b) { return V16(a.r * b.r); }
inline V16 operator/(V16 a, V16 b) { return V16(a.r / b.r); }
inline V16 sqrt(V16 a) {
  for (int k = 0; k < 16; ++k) a.r[k] = __builtin_sqrtf(a.r[k]);
  return a;
}
// Same result as maxps: the second operand unless a > b.
inline V16 max(V16 a, V16 b) { return V16(a.r > b.r ? a.r : b.r); }
inline V16 live(V16 v, Full) { return v; }
inline V16 live(V16 v, Tail t) {
  const i32x16 index = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return V16((index < static_cast<int>(t.count)) ? v.r : f32x16{});
}

struct BadLanes {
  i32x16 m{};
  bool any() const {
    for (int k = 0; k < 16; ++k)
      if (m[k] != 0) return true;
    return false;
  }
};
inline void check_finite(V16 v, BadLanes& bad) {
  // |v| < inf is false for inf and NaN; the sign bit is cleared on the integer image.
  const i32x16 magnitude = __builtin_bit_cast(i32x16, v.r) & 0x7fffffff;
  bad.m |= ~(__builtin_bit_cast(f32x16, magnitude) < __builtin_inff());
}
inline void store_half(half_bits* p, V16 v, Full, BadLanes& bad) {
  bool overflow = false;
  for (int k = 0; k < 16; ++k) p[k] = float_to_half(v.r[k], overflow);
  if (overflow) bad.m[0] = -1;
}

struct W16 {
  f64x8 lo, hi;
};
inline W16 widen(V16 a) {
  W16 w;
  for (int k = 0; k < 8; ++k) {
    w.lo[k] = static_cast<double>(a.r[k]);
    w.hi[k] = static_cast<double>(a.r[k + 8]);
  }
  return w;
}
struct D16 {
  f64x8 lo{}, hi{};
};
inline void add_product(D16& acc, const W16& a, const W16& b) {
  acc.lo += a.lo * b.lo;
  acc.hi += a.hi * b.hi;
}
inline void add(D16& acc, const W16& a) {
  acc.lo += a.lo;
  acc.hi += a.hi;
}
inline void lanes_of(const D16& acc, double out[16]) {
  std::memcpy(out, &acc.lo, sizeof acc.lo);
  std::memcpy(out + 8, &acc.hi, sizeof acc.hi);
}

#endif

// A tail's fp16 store goes through a whole-block staging area (lanes past the tail are not
// written to memory, and their values, zeros, cannot raise the flag).
inline void store_half(half_bits* p, V16 v, Tail t, BadLanes& bad) {
  half_bits staged[16];
  store_half(staged, live(v, t), Full{}, bad);
  std::memcpy(p, staged, t.count * sizeof(half_bits));
}

// Sums of products with fp32 partials: each lane adds 4 products in fp32 (at most 4 roundings
// of 2^-24), then the partial is widened and added to a double accumulator. A quarter of the
// double work of add_product on every value, and the same operations at every level.
struct Sum16 {
  D16 acc;
  V16 partial{0.0f};
  unsigned count = 0;
};
inline void add_product(Sum16& s, V16 a, V16 b) {
  s.partial = s.partial + a * b;
  if (++s.count == 4) {
    add(s.acc, widen(s.partial));
    s.partial = V16(0.0f);
    s.count = 0;
  }
}

// The lanes added by a fixed pairwise tree (k with k+8, then k+4, k+2, k+1): the same sum at
// every level, with a dependency chain of 4 additions instead of 15.
inline double total(const D16& acc) {
  double lanes[16];
  lanes_of(acc, lanes);
  for (int width = 8; width >= 1; width /= 2) {
    for (int k = 0; k < width; ++k) lanes[k] += lanes[k + width];
  }
  return lanes[0];
}
inline double total(Sum16& s) {
  if (s.count != 0) add(s.acc, widen(s.partial));
  return total(s.acc);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd
