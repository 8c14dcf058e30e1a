#pragma once
// A 16-lane float vector for kernel files (*.kernels.cpp) of any folder, one representation per
// ISA level: one __m512 at avx512 (exec/vec16_avx512.h), two __m256 at avx2 (vec16_avx2.h),
// four float32x4_t at aarch64's neon (vec16_neon.h), a gcc generic vector at scalar
// (vec16_generic.h). Kernels are written once against it, a block of 16 elements at a time;
// every level computes each lane with the same IEEE operations in the same order (no FMA: the
// kernel files turn contraction off), so all levels give bit-identical results, reductions
// included (lane k always takes the elements k, k+16, ... of a range; Sum16 adds 4 blocks of
// products in fp32, then into 16 double accumulators; the lanes are added by a fixed tree at the
// end).
//
// Every representation provides: V16 (V16(float) broadcasts), load/store (Full or Tail), + - * /,
// sqrt, max (the second operand unless a > b), live (zeroes the lanes past a tail), BadLanes with
// check_finite and store_half for a Full block, W16 = widen(V16) to double, D16 accumulators
// with add_product, add and lanes_of.
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
#include "exec/vec16_blocks.h"

#if APEXNPU_ISA_USES_AVX512
#include "exec/vec16_avx512.h"
#elif APEXNPU_ISA_USES_AVX2
#include "exec/vec16_avx2.h"
#elif APEXNPU_ISA_USES_NEON
#include "exec/vec16_neon.h"
#else
#include "exec/vec16_generic.h"
#endif

namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd {

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
