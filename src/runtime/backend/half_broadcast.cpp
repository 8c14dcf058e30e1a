#include "backend/half_broadcast.h"

#include <atomic>
#include <limits>

#include "exec/chunking.h"
#include "exec/error.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(bool, binary_half_broadcast_range,
                    (HalfBinaryOp, const half_bits*, const half_bits*, const BroadcastDim*, std::size_t,
                     std::size_t, half_bits*, std::size_t))

bool binary_half_broadcast(HalfBinaryOp op, const half_bits* a, const half_bits* b,
                           std::span<const BroadcastDim> dims, half_bits* out, std::size_t n) {
  if (dims.empty() || dims.size() > kMaxBroadcastDims)
    throw ArgumentError(
        concat("a broadcast layout has 1 to ", kMaxBroadcastDims, " dimensions, not ", dims.size()));
  // The sizes' product, checked against n without overflowing.
  bool covers = true;
  std::size_t elements = 1;
  for (const BroadcastDim& dim : dims) {
    if (dim.size == 0) {  // no elements, whatever the other sizes
      covers = true;
      elements = 0;
      break;
    }
    if (elements > std::numeric_limits<std::size_t>::max() / dim.size) covers = false;
    elements *= dim.size;
  }
  if (!covers || elements != n)
    throw ArgumentError(concat("the broadcast layout's sizes do not multiply to the ", n, " elements"));
  if (n == 0) return false;
  auto* fn = APEXNPU_ISA_SELECT(binary_half_broadcast_range);
  std::atomic<bool> bad{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    const ChunkRange r = chunk_range(c, n);
    if (fn(op, a + r.begin, b, dims.data(), dims.size(), r.begin, out + r.begin, r.size()))
      bad.store(true, std::memory_order_relaxed);
  });
  return bad.load();
}

}  // namespace apexnpu::rt
