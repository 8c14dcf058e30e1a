#pragma once
// Fused gradient norms and clipping over combined buffers (torch.nn.utils.clip_grad_norm_,
// torch 1.13 semantics).
//
//   GradBuffer g{combined.tensor.data(), DType::float32, &combined.segments};
//   double total = clip_grad_norm({&g, 1}, /*max_norm=*/1.0, /*norm_type=*/2.0, device(0));
//   double per_tensor[N]; double l2 = grad_norm(g, NormType::l2, per_tensor, device(0));
//
// Only the segments are read (padding is ignored). Norm types: 2 (L2) and inf (max |x|).
// Precision: L2 accumulates x*x in double (x*x of a float is exact in double) over 16 fixed
// lanes per work item, items of a segment added in order, segments added in order: the result
// is bit-identical for any thread count and ISA level, and within ~n*2^-53 relative of the
// exact sum. Inf norm is exact. inf/NaN gradients give an inf/NaN norm (NaN wins for the inf
// norm, as torch's max does) and raise the device float status.
// Multi-threaded over the segment tables' work items, ISA-dispatched; after a first call on a
// thread (which sizes a thread-local scratch array) nothing is allocated.
#include <cstddef>
#include <span>

#include "backend/device.h"
#include "backend/dtype.h"
#include "tensor/segment_table.h"

namespace apexnpu::rt {

enum class NormType { l2, inf };

// 2 -> l2, +inf -> inf; anything else is an ArgumentError (only L2 and inf are fused).
NormType parse_norm_type(double norm_type);

// One combined buffer: data points at element 0 of the buffer the table's offsets refer to.
struct GradBuffer {
  void* data;
  DType dtype;  // float32 or float16
  const SegmentTable* segments;
};

// Norm over all segments of one buffer; per_segment (nullable) receives segments->size() norms.
double grad_norm(const GradBuffer& buffer, NormType type, double* per_segment, Device& device);

// Total norm over several buffers (e.g. one per parameter group, fp16 and fp32 mixed).
double grad_norm(std::span<const GradBuffer> buffers, NormType type, Device& device);

// torch.nn.utils.clip_grad_norm_: total = norm over every segment of every buffer;
// coef = max_norm / (total + 1e-6); if min(coef, 1) != 1 (NaN included) every segment is
// multiplied by it in place (float16 saturating). Returns total. max_norm is not validated,
// like torch.
double clip_grad_norm(std::span<const GradBuffer> buffers, double max_norm, double norm_type, Device& device);

// Multiplies every segment of the buffer by factor in place; returns (and reports to the float
// status) whether any result is inf/NaN or saturated.
bool scale_segments(const GradBuffer& buffer, float factor, Device& device);

}  // namespace apexnpu::rt
