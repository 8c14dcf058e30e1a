#pragma once
// Shared pieces of the optimizer kernel files (*.kernels.cpp only).
//
// Kernel files are compiled with -ffp-contract=off at every level (build.json): gcc contracts
// a*b+c into an FMA in C++ whenever -mfma is on (the avx2/avx512 levels) and never at the
// scalar level, and the optimizers promise bit-identical results at every level.

#include "exec/vec16.h"
#include "optim/kernel_args.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {

using namespace ::apexnpu::rt::APEXNPU_ISA_NS::optim_simd;

// Stores an updated parameter block: the fp32 value, its fp16 copy when there is one, and
// whether it is finite.
template <typename Lanes>
inline void store_param(float* p, half_bits* p16, std::size_t i, V16 value, Lanes lanes, BadLanes& bad) {
  store(p + i, value, lanes);
  check_finite(live(value, lanes), bad);
  if (p16 != nullptr) store_half(p16 + i, value, lanes, bad);
}

// buf[i] = decay * buf[i] + one_minus_decay * x (a moving average: Adam's moments, the square
// averages of RMSprop and Adadelta), stored back; returns the new value.
template <typename Lanes>
inline V16 average_into(float* buf, std::size_t i, V16 x, V16 decay, V16 one_minus_decay, Lanes lanes) {
  const V16 averaged = decay * load(buf + i, lanes) + one_minus_decay * x;
  store(buf + i, averaged, lanes);
  return averaged;
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
