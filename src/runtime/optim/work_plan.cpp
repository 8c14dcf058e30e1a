#include "optim/work_plan.h"

#include "exec/chunking.h"

namespace apexnpu::rt::optim {

WorkPlan::WorkPlan(std::span<const Segment> groups, std::span<const std::size_t> owners,
                   std::size_t block_elements_limit) {
  auto owner = [&](std::size_t g) { return owners.empty() ? g : owners[g]; };
  // Blocks first: runs of whole owners, closed once they reach kBlockElements.
  std::vector<std::size_t> block_end_groups;
  std::size_t block_elements = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    block_elements += groups[g].numel;
    const bool owner_ends = g + 1 == groups.size() || owner(g + 1) != owner(g);
    if (owner_ends && (block_elements >= block_elements_limit || g + 1 == groups.size())) {
      block_end_groups.push_back(g + 1);
      block_elements = 0;
    }
  }
  // Then pieces and units, a unit never crossing a block boundary.
  group_first_.reserve(groups.size() + 1);
  std::size_t g = 0;
  for (const std::size_t end_group : block_end_groups) {
    WorkBlock block{g, end_group, unit_count(), 0};
    std::size_t unit_elements = 0;
    for (; g < end_group; ++g) {
      const std::size_t end = groups[g].offset + groups[g].numel;
      for (std::size_t begin = groups[g].offset; begin < end; begin += kChunkElements) {
        const std::size_t piece_end = begin + kChunkElements < end ? begin + kChunkElements : end;
        pieces_.push_back({g, begin, piece_end});
        unit_elements += piece_end - begin;
        if (unit_elements >= kChunkElements) {
          unit_first_.push_back(pieces_.size());
          unit_elements = 0;
        }
      }
      group_first_.push_back(pieces_.size());
    }
    if (unit_first_.back() != pieces_.size()) unit_first_.push_back(pieces_.size());
    block.end_unit = unit_count();
    blocks_.push_back(block);
  }
}

}  // namespace apexnpu::rt::optim
