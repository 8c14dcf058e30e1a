#include "tensor/change_data_ptr.h"

#include "exec/error.h"

namespace apexnpu::rt {

void change_data_ptr(TensorView& dst, const TensorView& src, std::int64_t offset) {
  if (offset < 0) throw ArgumentError(concat("change_data_ptr: offset must be >= 0, got ", offset));
  if (!src.storage)
    throw ArgumentError("change_data_ptr: src has no storage (null); it must be a combined tensor");
  if (dst.dtype != src.dtype)
    throw ArgumentError(concat("change_data_ptr: dst and src dtypes differ (dst ", dtype_name(dst.dtype),
                               ", src ", dtype_name(src.dtype), ")"));
  if (!is_fused_dtype(src.dtype))
    throw ArgumentError(
        concat("change_data_ptr: only float16 and float32 are supported, got ", dtype_name(src.dtype)));
  const auto off = static_cast<std::uint64_t>(offset);
  if (off > src.numel || dst.numel > src.numel - off)
    throw ArgumentError(concat("change_data_ptr: dst.numel (", dst.numel, ") + offset (", offset,
                               ") = ", dst.numel + off, " exceeds src.numel (", src.numel, ")"));
  dst.storage = src.storage;
  dst.offset = src.offset + off;
}

}  // namespace apexnpu::rt
