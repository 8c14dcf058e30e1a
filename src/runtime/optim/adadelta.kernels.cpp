// Adadelta (torch.optim.Adadelta) over a range of the combined buffer, one pass.
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {

bool adadelta_range(const AdadeltaArgs& a, std::size_t begin, std::size_t end) {
  const V16 lr(a.lr), rho(a.rho), omr(a.one_minus_rho), eps(a.eps), wd(a.weight_decay);
  BadLanes bad;  // the pointers as locals: stores through them cannot change them
  float* const param = a.p;
  const float* const grad = a.g;
  float* const square_avg_buf = a.square_avg;
  float* const acc_delta_buf = a.acc_delta;
  half_bits* const p16 = a.p16;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(param + i, lanes);
    const V16 g = load(grad + i, lanes) + wd * p;
    const V16 square_avg = average_into(square_avg_buf, i, g * g, rho, omr, lanes);
    const V16 acc_delta = load(acc_delta_buf + i, lanes);
    const V16 delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g;
    store(acc_delta_buf + i, rho * acc_delta + omr * (delta * delta), lanes);
    store_param(param, p16, i, p - lr * delta, lanes, bad);
  });
  return bad.any();
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
