#include "tensor/combine.h"

#include <vector>

#include "exec/error.h"
#include "tensor/change_data_ptr.h"

namespace apexnpu::rt {

std::optional<CombinedTensor> combine(std::span<TensorView> tensors, bool copy_values) {
  if (tensors.empty()) return std::nullopt;
  const DType dtype = tensors[0].dtype;
  Device* target = nullptr;
  std::size_t total = 0;
  std::vector<Segment> segments;
  segments.reserve(tensors.size());
  // Validate everything before changing anything.
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const TensorView& t = tensors[i];
    if (!is_fused_dtype(t.dtype))
      throw ArgumentError(concat("combine: tensor ", i, " has dtype ", dtype_name(t.dtype),
                                 "; fused tensors must be float32 or float16"));
    if (t.dtype != dtype)
      throw ArgumentError(concat("combine: tensors must share one dtype; tensor 0 is ", dtype_name(dtype),
                                 ", tensor ", i, " is ", dtype_name(t.dtype)));
    if (t.storage) {
      if (target == nullptr)
        target = &t.device();
      else if (&t.device() != target)
        throw ArgumentError(
            concat("combine: tensor ", i, " is on ", t.device().name(), ", the others on ", target->name()));
    } else if (copy_values && t.numel != 0) {
      throw ArgumentError(concat("combine: tensor ", i, " has no storage, so its values cannot be copied"));
    }
    segments.push_back({total, t.numel});
    total += aligned_storage_size(t.numel);
  }
  Device& dev = target != nullptr ? *target : device(0);
  CombinedTensor combined{TensorView::empty(dev, dtype, total), SegmentTable(std::move(segments))};
  dev.fill(combined.tensor.data(), dtype, total, 0.0f);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    TensorView& t = tensors[i];
    const TensorView old = t;  // keeps the old storage alive until its values are copied
    change_data_ptr(t, combined.tensor, static_cast<std::int64_t>(combined.segments[i].offset));
    if (copy_values && old.numel != 0) dev.copy_device_to_device(t.data(), old.data(), old.bytes());
  }
  return combined;
}

std::optional<TensorView> get_part_combined_tensor(const TensorView* combined, std::int64_t index,
                                                   std::int64_t size) {
  if (combined == nullptr || size == 0) return std::nullopt;
  if (size < 0) throw ArgumentError(concat("get_part_combined_tensor: size must be >= 0, got ", size));
  if (index < 0) throw ArgumentError(concat("get_part_combined_tensor: index must be >= 0, got ", index));
  const auto end = static_cast<std::uint64_t>(index) + static_cast<std::uint64_t>(size);
  if (end > combined->numel)
    throw ArgumentError(concat("get_part_combined_tensor: (index + size) (", end,
                               ") > combined tensor size (", combined->numel, ")"));
  TensorView part{nullptr, 0, static_cast<std::size_t>(size), combined->dtype};
  change_data_ptr(part, *combined, index);
  return part;
}

bool is_combined_tensor_valid(const TensorView* combined, std::span<const TensorView> tensors) {
  if (tensors.empty()) return true;
  if (combined == nullptr || !combined->storage) return false;
  const auto* start = static_cast<const char*>(combined->data());
  const auto* end = start + combined->bytes();
  for (const TensorView& t : tensors) {
    if (!t.storage) return false;
    const auto* p = static_cast<const char*>(t.data());
    // Compare as integers: the pointers may belong to unrelated allocations.
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    if (a < reinterpret_cast<std::uintptr_t>(start) || a >= reinterpret_cast<std::uintptr_t>(end))
      return false;
  }
  return true;
}

}  // namespace apexnpu::rt
