#include "amp/unscale.h"

#include <atomic>
#include <cmath>

#include "amp/scale_kernels.h"
#include "exec/chunking.h"
#include "exec/error.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

bool unscale(void* grads, DType dtype, std::size_t n, float inv_scale, float* out, Device& device) {
  if (!(std::isfinite(inv_scale) && inv_scale > 0.0f))
    throw ArgumentError(concat("unscale: inv_scale must be finite and > 0, got ", inv_scale));
  if (!is_fused_dtype(dtype))
    throw ArgumentError(concat("unscale: gradients must be float32 or float16, got ", dtype_name(dtype)));
  if (n != 0 && grads == nullptr) throw ArgumentError("unscale: gradient pointer is null");
  std::atomic<bool> overflow{false};
  if (dtype == DType::float32) {
    auto* fn = APEXNPU_ISA_SELECT(scale_f32);
    const auto* in = static_cast<const float*>(grads);
    float* dst = out != nullptr ? out : static_cast<float*>(grads);
    parallel_for(chunk_count(n), [&](std::size_t c) {
      const ChunkRange r = chunk_range(c, n);
      if (fn(in + r.begin, dst + r.begin, r.size(), inv_scale))
        overflow.store(true, std::memory_order_relaxed);
    });
  } else {
    auto* fn = APEXNPU_ISA_SELECT(scale_f16);
    auto* in = static_cast<half_bits*>(grads);
    parallel_for(chunk_count(n), [&](std::size_t c) {
      const ChunkRange r = chunk_range(c, n);
      if (fn(in + r.begin, out != nullptr ? nullptr : in + r.begin, out != nullptr ? out + r.begin : nullptr,
             r.size(), inv_scale))
        overflow.store(true, std::memory_order_relaxed);
    });
  }
  const bool result = overflow.load();
  if (result) device.float_status().raise();
  return result;
}

bool unscale(const TensorView& grads, float inv_scale, const TensorView* master) {
  if (!grads.storage) throw ArgumentError("unscale: gradients have no storage");
  float* out = nullptr;
  if (master != nullptr) {
    if (master->dtype != DType::float32)
      throw ArgumentError(
          concat("unscale: master gradients must be float32, got ", dtype_name(master->dtype)));
    if (master->numel != grads.numel || !master->storage)
      throw ArgumentError(
          concat("unscale: master gradients have ", master->numel, " elements, gradients ", grads.numel));
    out = master->f32();
  }
  return unscale(grads.data(), grads.dtype, grads.numel, inv_scale, out, grads.device());
}

}  // namespace apexnpu::rt
