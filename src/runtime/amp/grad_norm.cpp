#include "amp/grad_norm.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "amp/norm_partial.h"
#include "amp/scale_kernels.h"
#include "exec/error.h"
#include "exec/half.h"
#include "exec/isa.h"
#include "exec/thread_pool.h"

namespace apexnpu::rt {

APEXNPU_ISA_DECLARE(NormPartial, norm_partial_f32, (const float*, std::size_t, bool))
APEXNPU_ISA_DECLARE(NormPartial, norm_partial_f16, (const half_bits*, std::size_t, bool))

namespace {

void check_buffer(const GradBuffer& b) {
  if (b.segments == nullptr) throw ArgumentError("grad norm: buffer has no segment table");
  if (!is_fused_dtype(b.dtype))
    throw ArgumentError(concat("grad norm: gradients must be float32 or float16, got ", dtype_name(b.dtype)));
  if (b.data == nullptr && b.segments->extent() != 0)
    throw ArgumentError("grad norm: buffer pointer is null");
}

float bits_to_float(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// The norm of one buffer before the final root: sum of squares (l2) or max |x| (inf), per
// segment into `per_segment` (nullable) and in total. Raises the float status on inf/NaN.
double reduce_buffer(const GradBuffer& b, NormType type, double* per_segment, Device& device) {
  check_buffer(b);
  const SegmentTable& table = *b.segments;
  const auto items = table.chunks();
  // One partial per item, made per call: a thread_local buffer would need glibc's
  // __cxa_thread_atexit_impl (2.18), above the manylinux_2_17 baseline (python/glibc_floor.cpp);
  // next to the pass over the gradients, the allocation is noise.
  std::vector<NormPartial> partial(items.size());
  const bool l2 = type == NormType::l2;
  if (b.dtype == DType::float32) {
    auto* fn = APEXNPU_ISA_SELECT(norm_partial_f32);
    const auto* x = static_cast<const float*>(b.data);
    parallel_for(items.size(),
                 [&](std::size_t k) { partial[k] = fn(x + items[k].begin, items[k].size(), l2); });
  } else {
    auto* fn = APEXNPU_ISA_SELECT(norm_partial_f16);
    const auto* x = static_cast<const half_bits*>(b.data);
    parallel_for(items.size(),
                 [&](std::size_t k) { partial[k] = fn(x + items[k].begin, items[k].size(), l2); });
  }
  double total = 0.0;
  std::uint32_t total_bits = 0;
  for (std::size_t s = 0; s < table.size(); ++s) {
    double sum = 0.0;
    std::uint32_t bits = 0;
    for (std::size_t k = table.first_chunk(s); k < table.first_chunk(s + 1); ++k) {
      sum += partial[k].sum_of_squares;
      bits = partial[k].max_abs_bits > bits ? partial[k].max_abs_bits : bits;
    }
    total += sum;
    total_bits = bits > total_bits ? bits : total_bits;
    if (per_segment != nullptr) per_segment[s] = l2 ? std::sqrt(sum) : bits_to_float(bits);
  }
  const double result = l2 ? total : static_cast<double>(bits_to_float(total_bits));
  if (!std::isfinite(result)) device.float_status().raise();
  return result;
}

// Combines per-buffer values in order; the inf norm lets NaN win, as torch's max does.
double combine_max(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}

}  // namespace

NormType parse_norm_type(double norm_type) {
  if (norm_type == 2.0) return NormType::l2;
  if (std::isinf(norm_type) && norm_type > 0) return NormType::inf;
  throw ArgumentError(concat("norm_type must be 2 or inf for the fused gradient norm, got ", norm_type));
}

double grad_norm(const GradBuffer& buffer, NormType type, double* per_segment, Device& device) {
  const double r = reduce_buffer(buffer, type, per_segment, device);
  return type == NormType::l2 ? std::sqrt(r) : r;
}

double grad_norm(std::span<const GradBuffer> buffers, NormType type, Device& device) {
  double r = 0.0;
  for (const GradBuffer& b : buffers) {
    const double v = reduce_buffer(b, type, nullptr, device);
    r = type == NormType::l2 ? r + v : combine_max(r, v);
  }
  return type == NormType::l2 ? std::sqrt(r) : r;
}

bool scale_segments(const GradBuffer& buffer, float factor, Device& device) {
  check_buffer(buffer);
  const auto items = buffer.segments->chunks();
  std::atomic<bool> bad{false};
  if (buffer.dtype == DType::float32) {
    auto* fn = APEXNPU_ISA_SELECT(scale_f32);
    auto* x = static_cast<float*>(buffer.data);
    parallel_for(items.size(), [&](std::size_t k) {
      float* const piece = x + items[k].begin;
      if (fn(piece, piece, items[k].size(), factor)) bad.store(true, std::memory_order_relaxed);
    });
  } else {
    auto* fn = APEXNPU_ISA_SELECT(scale_f16);
    auto* x = static_cast<half_bits*>(buffer.data);
    parallel_for(items.size(), [&](std::size_t k) {
      half_bits* const piece = x + items[k].begin;
      if (fn(piece, piece, nullptr, items[k].size(), factor)) bad.store(true, std::memory_order_relaxed);
    });
  }
  const bool result = bad.load();
  if (result) device.float_status().raise();
  return result;
}

double clip_grad_norm(std::span<const GradBuffer> buffers, double max_norm, double norm_type,
                      Device& device) {
  const NormType type = parse_norm_type(norm_type);
  for (const GradBuffer& b : buffers) check_buffer(b);
  const double total = grad_norm(buffers, type, device);
  // torch 1.13: clip_coef = max_norm / (total_norm + 1e-6), clamped to at most 1 (NaN stays NaN);
  // the multiply by 1 that torch also does changes nothing, so it is skipped.
  const double coef = max_norm / (total + 1e-6);
  const double clamped = std::isnan(coef) ? coef : (coef < 1.0 ? coef : 1.0);
  if (!(clamped == 1.0)) {
    const auto factor = static_cast<float>(clamped);
    for (const GradBuffer& b : buffers) scale_segments(b, factor, device);
  }
  return total;
}

}  // namespace apexnpu::rt
