#pragma once
// A flat tensor: a storage, an element offset into it, a length and a dtype (the runtime's
// kernels see every tensor as a 1-D run of elements).
//
//   TensorView t = TensorView::empty(device(0), DType::float32, 1000);
//   float* p = t.f32();   // = storage data + offset elements
#include <cstddef>
#include <memory>

#include "backend/dtype.h"
#include "exec/half.h"
#include "tensor/storage.h"

namespace apexnpu::rt {

struct TensorView {
  std::shared_ptr<Storage> storage;  // may be null (a view not yet pointing anywhere)
  std::size_t offset = 0;            // in elements of dtype
  std::size_t numel = 0;
  DType dtype = DType::float32;

  // A new view over fresh storage of numel elements (contents unspecified).
  static TensorView empty(Device& device, DType dtype, std::size_t numel) {
    return {Storage::allocate(device, numel * element_size(dtype)), 0, numel, dtype};
  }

  std::size_t element_bytes() const noexcept { return element_size(dtype); }
  std::size_t bytes() const noexcept { return numel * element_bytes(); }
  void* data() const noexcept {
    return storage ? static_cast<char*>(storage->data()) + offset * element_bytes() : nullptr;
  }
  float* f32() const noexcept { return static_cast<float*>(data()); }
  half_bits* f16() const noexcept { return static_cast<half_bits*>(data()); }
  Device& device() const noexcept { return storage->device(); }
};

}  // namespace apexnpu::rt
