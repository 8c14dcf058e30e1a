#include "optim/fused_optimizer.h"

#include "exec/error.h"

namespace apexnpu::rt::optim {
namespace detail {

void check_buffers(const char* optimizer, const FusedBuffers& b) {
  if (b.params == nullptr || b.grads == nullptr) {
    throw ArgumentError(concat(optimizer, ": params and grads buffers must be set (got ",
                               b.params == nullptr ? "null" : "a", " params and ",
                               b.grads == nullptr ? "null" : "a", " grads buffer)"));
  }
  if (static_cast<const void*>(b.params) == static_cast<const void*>(b.grads)) {
    throw ArgumentError(concat(optimizer, ": params and grads must be different buffers"));
  }
}

void check_state(const char* optimizer, const char* name, const float* state) {
  if (state == nullptr) {
    throw ArgumentError(
        concat(optimizer, ": state buffer '", name, "' is needed with these options but is null"));
  }
}

void check_extent(const char* optimizer, const FusedBuffers& b, std::size_t extent) {
  if (b.numel < extent) {
    throw ArgumentError(concat(optimizer, ": the buffers hold ", b.numel,
                               " elements but the segment table reaches element ", extent));
  }
}

void check_step_count(std::int64_t steps) {
  if (steps < 0) throw ArgumentError(concat("step count must be >= 0, got ", steps));
}

bool report(const FusedBuffers& b, bool bad) {
  if (bad) (b.device != nullptr ? *b.device : device(0)).float_status().raise();
  return bad;
}

}  // namespace detail

}  // namespace apexnpu::rt::optim
