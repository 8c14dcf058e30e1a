#include "backend/half_relu.h"

#include <atomic>

#include "exec/chunking.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(bool, relu_half_range, (const half_bits*, half_bits*, std::size_t))
APEXNPU_ISA_DECLARE(bool, relu_backward_half_range,
                    (const half_bits*, const half_bits*, half_bits*, std::size_t))

bool relu_half(const half_bits* in, half_bits* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(relu_half_range);
  std::atomic<bool> bad{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    if (fn(in + r.begin, out + r.begin, r.size())) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load();
}

bool relu_backward_half(const half_bits* grad, const half_bits* self, half_bits* out,
                        std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(relu_backward_half_range);
  std::atomic<bool> bad{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    if (fn(grad + r.begin, self + r.begin, out + r.begin, r.size()))
      bad.store(true, std::memory_order_relaxed);
  });
  return bad.load();
}

}  // namespace apexnpu::rt
