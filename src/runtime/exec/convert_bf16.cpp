#include "exec/convert_bf16.h"

#include <atomic>

#include "exec/chunking.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(void, convert_bf16_to_float_range, (const bf16_bits*, float*, std::size_t))
APEXNPU_ISA_DECLARE(bool, convert_float_to_bf16_range, (const float*, bf16_bits*, std::size_t, Bf16Mode))

void convert_bf16_to_float(const bf16_bits* in, float* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(convert_bf16_to_float_range);
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    fn(in + r.begin, out + r.begin, r.size());
  });
}

bool convert_float_to_bf16(const float* in, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  auto* fn = APEXNPU_ISA_SELECT(convert_float_to_bf16_range);
  std::atomic<bool> overflow{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    if (fn(in + r.begin, out + r.begin, r.size(), mode)) overflow.store(true, std::memory_order_relaxed);
  });
  return overflow.load();
}

}  // namespace apexnpu::rt
