#pragma once
// Element types of device buffers. Only float32 and float16 are supported by the runtime's
// kernels and by combine/change_data_ptr; the others exist so that callers (the binding) can
// describe any torch tensor and get a clear "not fp16/fp32" error.
#include <cstddef>
#include <cstdint>

namespace apexnpu::rt {

enum class DType : std::uint8_t { float32, float16, bfloat16, float64, int32, int64, uint8, bool8 };

constexpr std::size_t element_size(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32:
      return 4;
    case DType::float16:
      return 2;
    case DType::bfloat16:
      return 2;
    case DType::float64:
      return 8;
    case DType::int32:
      return 4;
    case DType::int64:
      return 8;
    case DType::uint8:
      return 1;
    case DType::bool8:
      return 1;
  }
  return 0;
}

constexpr const char* dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
    case DType::float64:
      return "float64";
    case DType::int32:
      return "int32";
    case DType::int64:
      return "int64";
    case DType::uint8:
      return "uint8";
    case DType::bool8:
      return "bool";
  }
  return "unknown";
}

// The dtypes the fused kernels, combine and change_data_ptr accept.
constexpr bool is_fused_dtype(DType dtype) noexcept {
  return dtype == DType::float32 || dtype == DType::float16;
}

}  // namespace apexnpu::rt
