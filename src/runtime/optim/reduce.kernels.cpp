// Gradient sum of squares over a range (BertAdam's per-tensor clipping, LAMB's global norm).
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {

double sum_squares_range(const float* g, std::size_t begin, std::size_t end) {
  Sum16 acc;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 x = load(g + i, lanes);
    add_product(acc, x, x);
  });
  return total(acc);
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
