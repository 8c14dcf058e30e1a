#include "backend/emulated_npu.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "exec/error.h"
#include "exec/half.h"

namespace apexnpu::rt {

std::string EmulatedNpu::name() const { return "npu:" + std::to_string(index_); }

void* EmulatedNpu::allocate(std::size_t bytes) {
  // aligned_alloc wants a size that is a multiple of the alignment.
  const std::size_t rounded = std::max<std::size_t>(
      kDeviceAlignment, (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment);
  if (rounded < bytes) throw Error(concat("cannot allocate ", bytes, " bytes on ", name()));
  void* ptr = std::aligned_alloc(kDeviceAlignment, rounded);
  if (ptr == nullptr) throw Error(concat("out of memory allocating ", bytes, " bytes on ", name()));
  return ptr;
}

void EmulatedNpu::deallocate(void* ptr) noexcept { std::free(ptr); }

void EmulatedNpu::copy_host_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void EmulatedNpu::copy_device_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
}

void EmulatedNpu::copy_device_to_device(void* dst, const void* src, std::size_t bytes) {
  if (bytes != 0) std::memmove(dst, src, bytes);  // views of one storage may overlap
}

void EmulatedNpu::fill(void* dst, DType dtype, std::size_t n, float value) {
  switch (dtype) {
    case DType::float32:
      std::fill_n(static_cast<float*>(dst), n, value);
      return;
    case DType::float16: {
      bool overflow = false;
      const half_bits h = float_to_half(value, overflow);
      if (overflow && n != 0) float_status().raise();
      std::fill_n(static_cast<half_bits*>(dst), n, h);
      return;
    }
    default:
      throw ArgumentError(concat("fill supports float32 and float16, got ", dtype_name(dtype)));
  }
}

namespace {
constexpr int kEmulatedDeviceCount = 8;
}

int device_count() noexcept { return kEmulatedDeviceCount; }

Device& device(int index) {
  static const auto devices = [] {
    std::array<std::unique_ptr<EmulatedNpu>, kEmulatedDeviceCount> all;
    for (int i = 0; i < kEmulatedDeviceCount; ++i) all[i] = std::make_unique<EmulatedNpu>(i);
    return all;
  }();
  if (index < 0 || index >= kEmulatedDeviceCount)
    throw ArgumentError(concat("device index ", index, " out of range: there are ", kEmulatedDeviceCount,
                               " emulated NPUs (0..", kEmulatedDeviceCount - 1, ")"));
  return *devices[static_cast<std::size_t>(index)];
}

}  // namespace apexnpu::rt
