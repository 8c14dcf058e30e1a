#pragma once
// Partial result of a norm over one work item (internal to amp/grad_norm*).
#include <cstdint>

namespace apexnpu::rt {

struct NormPartial {
  double sum_of_squares;       // L2
  std::uint32_t max_abs_bits;  // inf norm: max of (bits & 0x7fffffff); > 0x7f800000 means NaN
};

}  // namespace apexnpu::rt
