#pragma once
// How a per-tensor (or per-row) reduction is split into work, fixed at construction so a step
// allocates nothing and gives bit-identical results for any thread count.
//
// Groups are element ranges of the combined buffer (tensors, or AdamP's rows). Each group is cut
// into pieces of at most kChunkElements counted from the group's start; consecutive pieces are
// bundled into units of about kChunkElements elements, one parallel_for index per unit (so a
// model of many small tensors does not pay a dispatch per tensor). A kernel writes one partial
// per piece; the partials of a group are then added in piece order.
//
// Units are further bundled into blocks of consecutive groups holding about kBlockElements
// elements (one group alone if it is bigger). Two-pass optimizers run pass 1, the per-group
// combine and pass 2 block by block, so pass 2 finds the block's data still in the cache. A
// block never splits the groups of one owner (AdamP's rows of one tensor). Blocking changes no
// result: partials depend on pieces only.
#include <cstddef>
#include <span>
#include <vector>

#include "tensor/segment_table.h"

namespace apexnpu::rt::optim {

// About 1 Mi elements: with four fp32 buffers a block touches ~16 MiB, which stays in the
// last-level cache between the two passes on the machines we measured (see runtime_bench).
inline constexpr std::size_t kBlockElements = std::size_t{1} << 20;

struct WorkPiece {
  std::size_t group;
  std::size_t begin;  // [begin, end) in the combined buffer
  std::size_t end;
};

struct WorkBlock {
  std::size_t first_group, end_group;  // groups [first_group, end_group)
  std::size_t first_unit, end_unit;    // units [first_unit, end_unit)
};

class WorkPlan {
 public:
  WorkPlan() = default;
  // owners[g] (optional, non-decreasing): groups with the same owner stay in one block.
  explicit WorkPlan(std::span<const Segment> groups, std::span<const std::size_t> owners = {},
                    std::size_t block_elements = kBlockElements);

  std::span<const WorkPiece> pieces() const noexcept { return pieces_; }
  std::size_t group_count() const noexcept { return group_first_.size() - 1; }
  // Pieces of group g: [group_first(g), group_first(g + 1)).
  std::size_t group_first(std::size_t g) const noexcept { return group_first_[g]; }
  std::size_t unit_count() const noexcept { return unit_first_.size() - 1; }
  // Pieces of unit u: [unit_first(u), unit_first(u + 1)).
  std::size_t unit_first(std::size_t u) const noexcept { return unit_first_[u]; }
  std::span<const WorkBlock> blocks() const noexcept { return blocks_; }

 private:
  std::vector<WorkPiece> pieces_;
  std::vector<std::size_t> group_first_{0};
  std::vector<std::size_t> unit_first_{0};
  std::vector<WorkBlock> blocks_;
};

}  // namespace apexnpu::rt::optim
