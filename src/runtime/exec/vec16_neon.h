#pragma once
// exec/vec16.h's representation at aarch64's neon level: four float32x4_t, lanes 4k .. 4k+3 in
// q[k]. Only element-wise IEEE operations, never a fused multiply-add (vfmaq) where a kernel
// writes a multiply and an add; vdivq/vsqrtq are correctly rounded, as the other levels'.
#include <arm_neon.h>

#include <cstring>

#include "exec/half_simd.h"
#include "exec/vec16_blocks.h"

namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd {

struct V16 {
  float32x4_t q[4];
  V16() = default;
  explicit V16(float s) : q{vdupq_n_f32(s), vdupq_n_f32(s), vdupq_n_f32(s), vdupq_n_f32(s)} {}
};

// op applied to each quarter.
template <typename Op>
inline V16 each(V16 a, V16 b, Op op) {
  V16 r;
  r.q[0] = op(a.q[0], b.q[0]);
  r.q[1] = op(a.q[1], b.q[1]);
  r.q[2] = op(a.q[2], b.q[2]);
  r.q[3] = op(a.q[3], b.q[3]);
  return r;
}

inline V16 load(const float* p, Full) {
  V16 v;
  for (int k = 0; k < 4; ++k) v.q[k] = vld1q_f32(p + 4 * k);
  return v;
}
inline void store(float* p, V16 v, Full) {
  for (int k = 0; k < 4; ++k) vst1q_f32(p + 4 * k, v.q[k]);
}
// Tails go through a staging block: NEON has no masked loads or stores.
inline V16 load(const float* p, Tail t) {
  float staged[16] = {};
  std::memcpy(staged, p, t.count * sizeof(float));
  return load(staged, Full{});
}
inline void store(float* p, V16 v, Tail t) {
  float staged[16];
  store(staged, v, Full{});
  std::memcpy(p, staged, t.count * sizeof(float));
}

inline V16 operator+(V16 a, V16 b) {
  return each(a, b, [](auto x, auto y) { return vaddq_f32(x, y); });
}
inline V16 operator-(V16 a, V16 b) {
  return each(a, b, [](auto x, auto y) { return vsubq_f32(x, y); });
}
inline V16 operator*(V16 a, V16 b) {
  return each(a, b, [](auto x, auto y) { return vmulq_f32(x, y); });
}
inline V16 operator/(V16 a, V16 b) {
  return each(a, b, [](auto x, auto y) { return vdivq_f32(x, y); });
}
inline V16 sqrt(V16 a) {
  return each(a, a, [](auto x, auto) { return vsqrtq_f32(x); });
}
// The second operand unless a > b, as maxps (FMAX would return a NaN operand instead).
inline V16 max(V16 a, V16 b) {
  return each(a, b, [](auto x, auto y) { return vbslq_f32(vcgtq_f32(x, y), x, y); });
}
inline V16 live(V16 v, Full) { return v; }
inline V16 live(V16 v, Tail t) {
  const uint32x4_t count = vdupq_n_u32(t.count);
  uint32x4_t index = {0, 1, 2, 3};
  for (int k = 0; k < 4; ++k) {
    const uint32x4_t keep = vcltq_u32(index, count);
    v.q[k] = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(v.q[k]), keep));
    index = vaddq_u32(index, vdupq_n_u32(4));
  }
  return v;
}

// Lanes holding inf or NaN, OR-accumulated over the four quarters.
struct BadLanes {
  uint32x4_t m = vdupq_n_u32(0);
  bool any() const { return any_lane(m); }
};
inline void check_finite(V16 v, BadLanes& bad) {
  const float32x4_t inf = vdupq_n_f32(__builtin_inff());
  for (int k = 0; k < 4; ++k)  // not |v| < inf: inf or NaN
    bad.m = vorrq_u32(bad.m, vmvnq_u32(vcltq_f32(vabsq_f32(v.q[k]), inf)));
}
inline void store_half(half_bits* p, V16 v, Full, BadLanes& bad) {
  store_half8(p, v.q[0], v.q[1], bad.m);
  store_half8(p + 8, v.q[2], v.q[3], bad.m);
}

// 16 lanes widened to double (exact): lanes 2j, 2j+1 in d[j]; and 16 double accumulators.
struct W16 {
  float64x2_t d[8];
};
inline W16 widen(V16 a) {
  W16 w;
  for (int k = 0; k < 4; ++k) {
    w.d[2 * k] = vcvt_f64_f32(vget_low_f32(a.q[k]));
    w.d[2 * k + 1] = vcvt_high_f64_f32(a.q[k]);
  }
  return w;
}
struct D16 {
  float64x2_t d[8] = {};
};
inline void add_product(D16& acc, const W16& a, const W16& b) {
  for (int j = 0; j < 8; ++j) acc.d[j] = vaddq_f64(acc.d[j], vmulq_f64(a.d[j], b.d[j]));
}
inline void add(D16& acc, const W16& a) {
  for (int j = 0; j < 8; ++j) acc.d[j] = vaddq_f64(acc.d[j], a.d[j]);
}
inline void lanes_of(const D16& acc, double out[16]) {
  for (int j = 0; j < 8; ++j) vst1q_f64(out + 2 * j, acc.d[j]);
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd
