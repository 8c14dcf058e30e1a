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
// Units are further bundled into blocks of consecutive groups holding at most kBlockElements
// elements (or one owner alone if it is bigger); a block never splits the groups of one owner
// (AdamP's rows of one tensor). Two-pass optimizers run a block of one unit (small tensors)
// entirely on one thread: pass 1, the per-group combine, pass 2, with the data still in that
// core's L2; such blocks run in parallel with each other. The bigger blocks (tensors larger
// than the cache, which blocking cannot help) run together: pass 1 over all their units in
// parallel, the combine, pass 2 in parallel. Blocking changes no result: partials depend on
// pieces only.
#include <cstddef>
#include <span>
#include <vector>

#include "tensor/segment_table.h"

namespace apexnpu::rt::optim {

// 32 Ki elements: with four fp32 buffers a block touches 512 KiB, which stays in a core's L2
// between the two passes. (Measured: 64 Ki-element tensors took 16.6 ms per 16 Mi elements
// blocked vs 24.8 unblocked; 1 Mi-element blocks gained nothing, the shared L3 does not keep
// them.) At most kChunkElements, so a block of small tensors is a single unit.
inline constexpr std::size_t kBlockElements = std::size_t{32} * 1024;

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
  // Indices into blocks(): blocks of at most one unit, and the others.
  std::span<const std::size_t> small_blocks() const noexcept { return small_blocks_; }
  std::span<const std::size_t> large_blocks() const noexcept { return large_blocks_; }
  // The units of all large blocks, in order (they run as one parallel pass).
  std::span<const std::size_t> large_units() const noexcept { return large_units_; }

 private:
  std::vector<WorkPiece> pieces_;
  std::vector<std::size_t> group_first_{0};
  std::vector<std::size_t> unit_first_{0};
  std::vector<WorkBlock> blocks_;
  std::vector<std::size_t> small_blocks_, large_blocks_, large_units_;
};

}  // namespace apexnpu::rt::optim
