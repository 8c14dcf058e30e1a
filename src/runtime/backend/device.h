#pragma once
// The device interface. EmulatedNpu (emulated_npu.h) implements it on host memory; a real
// Ascend backend would implement the same calls over the ACL runtime.
//
//   Device& npu = device(0);
//   void* p = npu.allocate(bytes);          // >= kDeviceAlignment aligned; nothing to free by hand
//   npu.fill(p, DType::float32, n, 0.0f);   //   if you hold it in a Storage (tensor/storage.h)
//   npu.synchronize();
//   if (npu.float_status().clear()) { /* overflow happened since the last clear */ }
//
// Kernels of this runtime read and write device memory directly, so a backend must hand out
// host-addressable memory (true for the emulated NPU; a real backend would launch device kernels
// instead and keep this interface for memory and status).
#include <cstddef>
#include <string>

#include "backend/dtype.h"
#include "backend/float_status.h"

namespace apexnpu::rt {

inline constexpr std::size_t kDeviceAlignment = 64;

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual std::string name() const = 0;  // e.g. "npu:0"
  virtual int index() const noexcept = 0;

  // At least kDeviceAlignment-aligned, never null (bytes == 0 gives a valid minimal block);
  // throws Error when out of memory.
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr) noexcept = 0;

  virtual void copy_host_to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_device_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_device_to_device(void* dst, const void* src, std::size_t bytes) = 0;
  // Sets n elements of dtype (float32 or float16) to value; float16 saturates (and raises the
  // float status) like every other fp16 store.
  virtual void fill(void* dst, DType dtype, std::size_t n, float value) = 0;
  // Waits for outstanding work (the emulated NPU runs everything synchronously).
  virtual void synchronize() = 0;

  FloatStatus& float_status() noexcept { return status_; }
  const FloatStatus& float_status() const noexcept { return status_; }

 protected:
  Device() = default;

 private:
  FloatStatus status_;
};

// The process-wide devices (emulated NPUs): index 0 .. device_count()-1.
int device_count() noexcept;
// Throws ArgumentError for an index out of range.
Device& device(int index = 0);

}  // namespace apexnpu::rt
