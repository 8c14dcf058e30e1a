#pragma once
// How a per-tensor (or per-row) reduction is split into work, fixed at construction so a step
// allocates nothing and gives bit-identical results for any thread count.
//
// Groups are element ranges of the combined buffer (tensors, or AdamP's rows). Each group is cut
// into pieces of at most kChunkElements counted from the group's start; consecutive pieces are
// bundled into units of about kChunkElements elements, one parallel_for index per unit (so a
// model of many small tensors does not pay a dispatch per tensor). A kernel writes one partial
// per piece; the partials of a group are then added in piece order.
#include <cstddef>
#include <span>
#include <vector>

#include "tensor/segment_table.h"

namespace apexnpu::rt::optim {

struct WorkPiece {
  std::size_t group;
  std::size_t begin;  // [begin, end) in the combined buffer
  std::size_t end;
};

class WorkPlan {
 public:
  WorkPlan() = default;
  explicit WorkPlan(std::span<const Segment> groups);

  std::span<const WorkPiece> pieces() const noexcept { return pieces_; }
  std::size_t group_count() const noexcept { return group_first_.size() - 1; }
  // Pieces of group g: [group_first(g), group_first(g + 1)).
  std::size_t group_first(std::size_t g) const noexcept { return group_first_[g]; }
  std::size_t unit_count() const noexcept { return unit_first_.size() - 1; }
  // Pieces of unit u: [unit_first(u), unit_first(u + 1)).
  std::size_t unit_first(std::size_t u) const noexcept { return unit_first_[u]; }

 private:
  std::vector<WorkPiece> pieces_;
  std::vector<std::size_t> group_first_{0};
  std::vector<std::size_t> unit_first_{0};
};

}  // namespace apexnpu::rt::optim
