#pragma once
// fp16 <-> fp32 in NEON registers (aarch64's neon level; exec/half_simd.h includes it), 8 values
// at a time, bit-identical to exec/half.h:
//  - FCVTL (half -> float) is exact and quiets a NaN keeping its payload, as half_to_float does;
//  - FCVTN (float -> half) rounds to nearest even, subnormals included, but overflows to inf and
//    keeps NaNs, so values are clamped to +-65504 and NaN lanes zeroed first, as float_to_half.
// Both follow FPCR, which Linux starts every thread with at its default (round to nearest, IEEE
// half format, NaN propagation), as every fp32 operation of the kernels does at every level.
#include <arm_neon.h>

#include "exec/half.h"

namespace apexnpu::rt::APEXNPU_ISA_NS {

inline float32x4x2_t load_half8(const half_bits* p) noexcept {
  const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(p));
  return {{vcvt_f32_f16(vget_low_f16(h)), vcvt_high_f32_f16(h)}};
}

// v clamped to +-65504 with NaN lanes +0 (FMAX/FMIN would keep a NaN); ORs the lanes that were
// beyond 65504 or NaN into `bad`.
inline float32x4_t saturate_for_half(float32x4_t v, uint32x4_t& bad) noexcept {
  const float32x4_t max = vdupq_n_f32(kHalfMax);
  bad = vorrq_u32(bad, vmvnq_u32(vcleq_f32(vabsq_f32(v), max)));  // not <= max: > max, or NaN
  const float32x4_t clamped = vminq_f32(vmaxq_f32(v, vdupq_n_f32(-kHalfMax)), max);
  return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(clamped), vceqq_f32(v, v)));
}

// Stores lo's 4 lanes then hi's as saturated halves.
inline void store_half8(half_bits* p, float32x4_t lo, float32x4_t hi, uint32x4_t& bad) noexcept {
  const float16x4_t low = vcvt_f16_f32(saturate_for_half(lo, bad));
  vst1q_u16(p, vreinterpretq_u16_f16(vcvt_high_f16_f32(low, saturate_for_half(hi, bad))));
}

inline bool any_lane(uint32x4_t mask) noexcept { return vmaxvq_u32(mask) != 0; }

}  // namespace apexnpu::rt::APEXNPU_ISA_NS
