#include "optim/work_plan.h"

#include "exec/chunking.h"

namespace apexnpu::rt::optim {

WorkPlan::WorkPlan(std::span<const Segment> groups) {
  group_first_.reserve(groups.size() + 1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const std::size_t end = groups[g].offset + groups[g].numel;
    for (std::size_t begin = groups[g].offset; begin < end; begin += kChunkElements) {
      pieces_.push_back({g, begin, begin + kChunkElements < end ? begin + kChunkElements : end});
    }
    group_first_.push_back(pieces_.size());
  }
  std::size_t unit_elements = 0;
  for (std::size_t k = 0; k < pieces_.size(); ++k) {
    unit_elements += pieces_[k].end - pieces_[k].begin;
    if (unit_elements >= kChunkElements || k + 1 == pieces_.size()) {
      unit_first_.push_back(k + 1);
      unit_elements = 0;
    }
  }
}

}  // namespace apexnpu::rt::optim
