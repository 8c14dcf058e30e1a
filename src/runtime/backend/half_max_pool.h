#pragma once
// 2-d max pooling of fp16 planes (N*C planes of H x W, contiguous) as the emulated NPU computes
// it: what torch's fp32 kernel gives on the exact fp32 values, stored as fp16 with saturation.
// torch's kernel (contiguous layout) scans each window row by row from its first in-bounds
// element, starts from -inf at that element's index, and takes an element when it is greater
// than the maximum so far or NaN (so the first of equal maxima wins, -0 and +0 are equal, and
// the last NaN wins); a window of -inf keeps its first index. Selection only: the output is the
// taken element (or -inf) stored saturating (NaN -> +0, +-inf -> +-65504, reported), the index
// its position in the plane. Returns true when something was reported.
#include <cstddef>
#include <cstdint>

#include "exec/half.h"

namespace apexnpu::rt {

struct PoolGeometry {
  std::int64_t in_h, in_w, out_h, out_w;
  std::int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
};

bool max_pool2d_half(const half_bits* in, half_bits* out, std::int64_t* indices, std::int64_t planes,
                     const PoolGeometry& g);

}  // namespace apexnpu::rt
