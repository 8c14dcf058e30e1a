#pragma once
// The buffers of one fused optimizer step (see fused_optimizer.h for the modes), on their own so
// that callers outside the runtime (the binding) include no more than this.
#include <cstddef>

#include "backend/device.h"
#include "exec/half.h"

namespace apexnpu::rt::optim {

struct FusedBuffers {
  float* params = nullptr;           // fp32 params, or the fp32 master params in fp16 mode
  const float* grads = nullptr;      // fp32 (master) gradients
  half_bits* half_params = nullptr;  // fp16 mode: the fp16 model params; null in fp32 mode
  std::size_t numel = 0;             // elements in every buffer (the combined buffer's length)
  Device* device = nullptr;          // whose float status a step raises; null: device(0)
};

}  // namespace apexnpu::rt::optim
