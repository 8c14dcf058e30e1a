#pragma once
// Fused unscale: one pass that multiplies gradients by inv_scale (= 1/loss_scale) and detects
// inf/NaN in the same pass. On overflow it raises the device float status and returns true.
//
//   bool overflow = unscale(grads, DType::float16, n, 1.0f / scale, master_grads, device(0));
//   if (scaler.update(overflow)) { /* skip the optimizer step */ }
//
// grads: n elements, float32 or float16, host-addressable device memory.
// out == nullptr: in place (float16 results are stored saturating); else out receives n float32
// values (the fp32 master gradients) and grads is only read. Overflow means a non-finite
// gradient (before or after scaling) or, in place in float16, a result beyond +-65504.
// Multi-threaded over fixed chunks, dispatched to the active ISA level, allocates nothing.
#include <cstddef>

#include "backend/device.h"
#include "backend/dtype.h"
#include "tensor/tensor_view.h"

namespace apexnpu::rt {

// ArgumentError for a dtype other than float32/float16 or a non-finite or non-positive
// inv_scale.
bool unscale(void* grads, DType dtype, std::size_t n, float inv_scale, float* out, Device& device);

// View form: master (optional) must be float32 with grads.numel elements.
bool unscale(const TensorView& grads, float inv_scale, const TensorView* master = nullptr);

}  // namespace apexnpu::rt
