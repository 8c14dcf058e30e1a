// Adadelta (torch.optim.Adadelta) over a range of the combined buffer, one pass.
#include "optim/kernel_common.h"

namespace apexnpu::rt::optim::APEXNPU_ISA_NS {

bool adadelta_range(const AdadeltaArgs& a, std::size_t begin, std::size_t end) {
  const V16 lr(a.lr), rho(a.rho), omr(a.one_minus_rho), eps(a.eps), wd(a.weight_decay);
  BadLanes bad;
  for_blocks(begin, end, [&](std::size_t i, auto lanes) {
    const V16 p = load(a.p + i, lanes);
    const V16 g = load(a.g + i, lanes) + wd * p;
    const V16 square_avg = rho * load(a.square_avg + i, lanes) + omr * (g * g);
    const V16 std_dev = sqrt(square_avg + eps);
    const V16 acc_delta = load(a.acc_delta + i, lanes);
    const V16 delta = sqrt(acc_delta + eps) / std_dev * g;
    store(a.square_avg + i, square_avg, lanes);
    store(a.acc_delta + i, rho * acc_delta + omr * (delta * delta), lanes);
    store_param(a.p, a.p16, i, p - lr * delta, lanes, bad);
  });
  return bad.any();
}

}  // namespace apexnpu::rt::optim::APEXNPU_ISA_NS
