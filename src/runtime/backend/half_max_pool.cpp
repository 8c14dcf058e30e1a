#include "backend/half_max_pool.h"

#include <algorithm>
#include <atomic>

#include "exec/chunking.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(bool, max_pool2d_half_plane,
                    (const half_bits*, half_bits*, std::int64_t*, const PoolGeometry&))

bool max_pool2d_half(const half_bits* in, half_bits* out, std::int64_t* indices, std::int64_t planes,
                     const PoolGeometry& g) {
  auto* fn = APEXNPU_ISA_SELECT(max_pool2d_half_plane);
  const auto plane_in = static_cast<std::size_t>(g.in_h * g.in_w);
  const auto plane_out = static_cast<std::size_t>(g.out_h * g.out_w);
  // Planes in tasks of about one chunk of input each; any split gives the same results.
  const std::size_t per_task = std::max<std::size_t>(1, kChunkElements / std::max<std::size_t>(plane_in, 1));
  const std::size_t tasks = (static_cast<std::size_t>(planes) + per_task - 1) / per_task;
  std::atomic<bool> bad{false};
  parallel_for(tasks, [&](std::size_t t) {
    const std::size_t first = t * per_task;
    const std::size_t last = std::min(first + per_task, static_cast<std::size_t>(planes));
    bool any = false;
    for (std::size_t p = first; p < last; ++p)
      any |= fn(in + p * plane_in, out + p * plane_out, indices + p * plane_out, g);
    if (any) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load();
}

}  // namespace apexnpu::rt
