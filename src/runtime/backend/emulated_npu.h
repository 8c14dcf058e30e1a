#pragma once
// The emulated NPU: device memory is 64-byte-aligned host memory, operations run synchronously
// on the calling thread (kernels use the thread pool themselves).
#include "backend/device.h"

namespace apexnpu::rt {

class EmulatedNpu final : public Device {
 public:
  explicit EmulatedNpu(int index) : index_(index) {}

  std::string name() const override;
  int index() const noexcept override { return index_; }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr) noexcept override;
  void copy_host_to_device(void* dst, const void* src, std::size_t bytes) override;
  void copy_device_to_host(void* dst, const void* src, std::size_t bytes) override;
  void copy_device_to_device(void* dst, const void* src, std::size_t bytes) override;
  void fill(void* dst, DType dtype, std::size_t n, float value) override;
  void synchronize() override {}

 private:
  int index_;
};

}  // namespace apexnpu::rt
