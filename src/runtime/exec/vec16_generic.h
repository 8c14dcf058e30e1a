#pragma once
// exec/vec16.h's representation at the baseline (scalar) level of any architecture: a GCC
// generic vector, lowered to whatever SIMD the baseline has (SSE2 on x86-64, NEON on aarch64) or
// to scalar code. Element-wise IEEE operations, so the results equal the other levels'; far
// cheaper to compile than 16-element arrays, which gcc must unroll and split into scalars to
// make fast.
#include <cstring>

#include "exec/half.h"
#include "exec/vec16_blocks.h"

namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd {

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

}  // namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd
