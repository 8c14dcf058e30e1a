#include "tensor/storage.h"

namespace apexnpu::rt {

std::shared_ptr<Storage> Storage::allocate(Device& device, std::size_t bytes) {
  void* data = device.allocate(bytes);
  try {
    Device* owner = &device;
    return std::shared_ptr<Storage>(
        new Storage(device, data, bytes, [owner](void* p) { owner->deallocate(p); }));
  } catch (...) {
    device.deallocate(data);
    throw;
  }
}

std::shared_ptr<Storage> Storage::adopt(Device& device, void* data, std::size_t bytes, Release release) {
  return std::shared_ptr<Storage>(new Storage(device, data, bytes, std::move(release)));
}

Storage::~Storage() {
  if (release_) release_(data_);
}

}  // namespace apexnpu::rt
