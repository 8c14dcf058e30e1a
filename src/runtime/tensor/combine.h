#pragma once
// Tensor fusion: Ascend apex's combine_tensors API (combine, get_part_combined_tensor,
// is_combined_tensor_valid) over many tensors of one dtype.
//
//   std::vector<TensorView> grads = ...;            // same dtype, float32 or float16
//   std::optional<CombinedTensor> c = combine(grads, /*copy_values=*/true);
//   // every grads[i] now points into c->tensor's storage, at c->segments[i].offset;
//   // padding between them is zero. c->segments drives per-tensor reductions.
//
// Layout: tensor i occupies aligned_storage_size(numel_i) = ceil(numel_i/16)*16 + 32 elements,
// in list order, starting at offset 0 (so with 64-byte-aligned storage every fp32 tensor starts
// on a 64-byte boundary). The re-pointed views share ownership of the combined storage.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "tensor/segment_table.h"
#include "tensor/tensor_view.h"

namespace apexnpu::rt {

struct CombinedTensor {
  TensorView tensor;      // the whole combined buffer
  SegmentTable segments;  // offset and numel of each original tensor, in list order
};

constexpr std::size_t aligned_storage_size(std::size_t numel) noexcept { return (numel + 15) / 16 * 16 + 32; }

// Allocates one zero-filled buffer on the device of the first tensor that has storage (else
// device(0)), re-points every tensor into it and, if copy_values, copies the old contents.
// Empty list -> std::nullopt. Errors (ArgumentError, nothing changed): dtype not
// float32/float16, dtypes differ, tensors on different devices, copy_values with a tensor that
// has no storage.
std::optional<CombinedTensor> combine(std::span<TensorView> tensors, bool copy_values);

// A view of `size` elements at element `index` of the combined buffer. Null combined or
// size == 0 -> std::nullopt. ArgumentError if index or size is negative, or
// index + size > the combined buffer's length.
std::optional<TensorView> get_part_combined_tensor(const TensorView* combined, std::int64_t index,
                                                   std::int64_t size);

// Whether every tensor's data address lies inside the combined buffer: true for an empty
// list; false if combined is null (or has no storage) or any tensor has no storage or starts
// outside [combined start, combined end).
bool is_combined_tensor_valid(const TensorView* combined, std::span<const TensorView> tensors);

}  // namespace apexnpu::rt
