// The fp32 saturation passes of backend/float_ops.h, spread over the thread pool; the loops are
// per ISA level (backend/float_ops.kernels.cpp).
#include "backend/float_ops.h"

#include <atomic>

#include "exec/chunking.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(bool, has_nonfinite_float_range, (const float*, std::size_t))
APEXNPU_ISA_DECLARE(bool, saturate_float_range, (float*, std::size_t))

namespace {

// Runs body(chunk range) over the thread pool; true if any chunk answered true.
template <typename Body>
bool any_float_chunk(std::size_t n, Body&& body) {
  std::atomic<bool> found{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    if (body(chunk_range(c, n))) found.store(true, std::memory_order_relaxed);
  });
  return found.load();
}

}  // namespace

bool has_nonfinite_float(const float* x, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(has_nonfinite_float_range);
  return any_float_chunk(n, [&](ChunkRange r) { return fn(x + r.begin, r.size()); });
}

bool saturate_float(float* x, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(saturate_float_range);
  return any_float_chunk(n, [&](ChunkRange r) { return fn(x + r.begin, r.size()); });
}

}  // namespace apexnpu::rt
