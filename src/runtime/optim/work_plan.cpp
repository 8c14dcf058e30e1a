#include "optim/work_plan.h"

#include "exec/chunking.h"

namespace apexnpu::rt::optim {

WorkPlan::WorkPlan(std::span<const Segment> groups, std::span<const std::size_t> owners,
                   std::size_t block_elements_limit) {
  auto owner = [&](std::size_t g) { return owners.empty() ? g : owners[g]; };
  // Blocks first: runs of whole owners of at most block_elements_limit elements (an owner
  // bigger than that is a block alone).
  std::vector<std::size_t> block_end_groups;
  std::size_t block_elements = 0;
  for (std::size_t g = 0; g < groups.size();) {
    std::size_t owner_end = g + 1, owner_elements = groups[g].numel;
    while (owner_end < groups.size() && owner(owner_end) == owner(g))
      owner_elements += groups[owner_end++].numel;
    if (block_elements > 0 && block_elements + owner_elements > block_elements_limit) {
      block_end_groups.push_back(g);
      block_elements = 0;
    }
    block_elements += owner_elements;
    g = owner_end;
  }
  if (!groups.empty()) block_end_groups.push_back(groups.size());
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
    if (block.end_unit - block.first_unit <= 1) {
      small_blocks_.push_back(blocks_.size());
    } else {
      large_blocks_.push_back(blocks_.size());
      for (std::size_t u = block.first_unit; u < block.end_unit; ++u) large_units_.push_back(u);
    }
    blocks_.push_back(block);
  }
}

}  // namespace apexnpu::rt::optim
