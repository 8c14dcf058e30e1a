#pragma once
// The per-device overflow flag of the NPU ("float status"). Kernels that meet inf/NaN in their
// inputs, or produce a value outside the target type's range (fp16 saturation), raise it; it
// stays raised until cleared explicitly, as on the NPU. Kernels raise it once per call (or per
// chunk), not per element: `if (chunk_overflowed) device.float_status().raise();`
#include <atomic>

namespace apexnpu::rt {

class FloatStatus {
 public:
  void raise() noexcept { flag_.store(true, std::memory_order_relaxed); }
  bool get() const noexcept { return flag_.load(std::memory_order_relaxed); }
  // Clears the flag and returns whether it was raised.
  bool clear() noexcept { return flag_.exchange(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> flag_{false};
};

}  // namespace apexnpu::rt
