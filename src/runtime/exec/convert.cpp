#include "exec/convert.h"

#include <atomic>

#include "exec/chunking.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(void, convert_half_to_float_range, (const half_bits*, float*, std::size_t))
APEXNPU_ISA_DECLARE(bool, convert_float_to_half_range, (const float*, half_bits*, std::size_t))

void convert_half_to_float(const half_bits* in, float* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(convert_half_to_float_range);
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    fn(in + r.begin, out + r.begin, r.size());
  });
}

bool convert_float_to_half(const float* in, half_bits* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(convert_float_to_half_range);
  std::atomic<bool> overflow{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    if (fn(in + r.begin, out + r.begin, r.size())) overflow.store(true, std::memory_order_relaxed);
  });
  return overflow.load();
}

}  // namespace apexnpu::rt
