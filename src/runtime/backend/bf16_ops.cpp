#include "backend/bf16_ops.h"

#include <atomic>

#include "exec/chunking.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(bool, copy_bf16_range, (const bf16_bits*, bf16_bits*, std::size_t, Bf16Mode))
APEXNPU_ISA_DECLARE(bool, add_bf16_range,
                    (const bf16_bits*, const bf16_bits*, bf16_bits*, std::size_t, Bf16Mode))

namespace {

// Runs body(chunk range) over the thread pool; true if any chunk reported.
template <typename Body>
bool any_bf16_chunk(std::size_t n, Body&& body) {
  std::atomic<bool> bad{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    if (body(chunk_range(c, n))) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load();
}

}  // namespace

bool copy_bf16(const bf16_bits* in, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  auto* fn = APEXNPU_ISA_SELECT(copy_bf16_range);
  return any_bf16_chunk(n, [&](ChunkRange r) { return fn(in + r.begin, out + r.begin, r.size(), mode); });
}

bool add_bf16(const bf16_bits* a, const bf16_bits* b, bf16_bits* out, std::size_t n, Bf16Mode mode) {
  auto* fn = APEXNPU_ISA_SELECT(add_bf16_range);
  return any_bf16_chunk(
      n, [&](ChunkRange r) { return fn(a + r.begin, b + r.begin, out + r.begin, r.size(), mode); });
}

}  // namespace apexnpu::rt
