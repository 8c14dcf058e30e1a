#include "backend/half_ops.h"

#include <atomic>
#include <cmath>

#include "exec/chunking.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(bool, saturate_half_range, (const half_bits*, half_bits*, std::size_t))
APEXNPU_ISA_DECLARE(bool, add_half_range, (const half_bits*, const half_bits*, half_bits*, std::size_t))
APEXNPU_ISA_DECLARE(bool, multiply_half_range, (const half_bits*, half_bits*, std::size_t, float))
APEXNPU_ISA_DECLARE(bool, divide_half_range, (const half_bits*, half_bits*, std::size_t, float))
APEXNPU_ISA_DECLARE(bool, relu_half_range, (const half_bits*, half_bits*, std::size_t))
APEXNPU_ISA_DECLARE(bool, relu_backward_half_range,
                    (const half_bits*, const half_bits*, half_bits*, std::size_t))
APEXNPU_ISA_DECLARE(bool, masked_fill_half_range,
                    (const half_bits*, const std::uint8_t*, std::size_t, std::size_t, half_bits*, std::size_t,
                     half_bits))

namespace {

// Runs body(chunk range) over the thread pool; true if any chunk reported.
template <typename Body>
bool any_chunk(std::size_t n, Body&& body) {
  std::atomic<bool> bad{false};
  parallel_for(chunk_count(n), [&](std::size_t c) {
    if (body(chunk_range(c, n))) bad.store(true, std::memory_order_relaxed);
  });
  return bad.load();
}

}  // namespace

bool saturate_half(const half_bits* in, half_bits* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(saturate_half_range);
  return any_chunk(n, [&](ChunkRange r) { return fn(in + r.begin, out + r.begin, r.size()); });
}

bool add_half(const half_bits* a, const half_bits* b, half_bits* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(add_half_range);
  return any_chunk(n, [&](ChunkRange r) { return fn(a + r.begin, b + r.begin, out + r.begin, r.size()); });
}

bool multiply_half(const half_bits* in, half_bits* out, std::size_t n, float factor) {
  auto* fn = APEXNPU_ISA_SELECT(multiply_half_range);
  return any_chunk(n, [&](ChunkRange r) { return fn(in + r.begin, out + r.begin, r.size(), factor); });
}

bool divide_half(const half_bits* in, half_bits* out, std::size_t n, float divisor) {
  // x / 2^k and x * 2^-k are the same real number, so their one rounding gives the same bits;
  // a product costs a fraction of a division (attention divides by sqrt(head size), often a
  // power of two).
  int exponent = 0;
  const float mantissa = std::frexp(divisor, &exponent);
  if (std::fabs(mantissa) == 0.5f) {
    const float reciprocal = std::ldexp(std::copysign(1.0f, divisor), 1 - exponent);
    if (std::isfinite(reciprocal) && reciprocal != 0.0f) return multiply_half(in, out, n, reciprocal);
  }
  auto* fn = APEXNPU_ISA_SELECT(divide_half_range);
  return any_chunk(n, [&](ChunkRange r) { return fn(in + r.begin, out + r.begin, r.size(), divisor); });
}

bool relu_half(const half_bits* in, half_bits* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(relu_half_range);
  return any_chunk(n, [&](ChunkRange r) { return fn(in + r.begin, out + r.begin, r.size()); });
}

bool relu_backward_half(const half_bits* grad, const half_bits* self, half_bits* out, std::size_t n) {
  auto* fn = APEXNPU_ISA_SELECT(relu_backward_half_range);
  return any_chunk(n,
                   [&](ChunkRange r) { return fn(grad + r.begin, self + r.begin, out + r.begin, r.size()); });
}

bool masked_fill_half(const half_bits* in, const std::uint8_t* mask, std::size_t period, half_bits* out,
                      std::size_t n, half_bits fill) {
  auto* fn = APEXNPU_ISA_SELECT(masked_fill_half_range);
  return any_chunk(n, [&](ChunkRange r) {
    return fn(in + r.begin, mask, period, r.begin, out + r.begin, r.size(), fill);
  });
}

}  // namespace apexnpu::rt
