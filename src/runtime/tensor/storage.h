#pragma once
// A device buffer shared by every view into it (std::shared_ptr<Storage>): the memory is freed
// when the last view lets go, so a view re-pointed into a combined buffer keeps it alive.
//
//   std::shared_ptr<Storage> s = Storage::allocate(device(0), bytes);   // uninitialised
//   std::shared_ptr<Storage> w = Storage::adopt(device(0), ptr, bytes, [](void* p) { ... });
#include <cstddef>
#include <functional>
#include <memory>

#include "backend/device.h"

namespace apexnpu::rt {

class Storage {
 public:
  using Release = std::function<void(void*)>;

  // Device memory of `bytes` bytes (kDeviceAlignment-aligned, contents unspecified).
  static std::shared_ptr<Storage> allocate(Device& device, std::size_t bytes);
  // Wraps memory owned elsewhere (e.g. a torch tensor's buffer); `release` (may be empty) runs
  // when the last view is gone. The memory must be host-addressable for the emulated NPU.
  static std::shared_ptr<Storage> adopt(Device& device, void* data, std::size_t bytes, Release release);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }
  Device& device() const noexcept { return *device_; }

 private:
  Storage(Device& device, void* data, std::size_t bytes, Release release)
      : device_(&device), data_(data), bytes_(bytes), release_(std::move(release)) {}

  Device* device_;
  void* data_;
  std::size_t bytes_;
  Release release_;
};

}  // namespace apexnpu::rt
