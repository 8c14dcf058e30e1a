// The work plan of the per-tensor reductions: pieces cover every group exactly, in order, cut at
// kChunkElements from each group's start; units and blocks partition the pieces in order;
// blocks hold whole owners, at most the block size of them unless one owner is bigger, and
// are maximal (the next owner would not fit); small blocks are those of at most one unit.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec/chunking.h"
#include "optim/work_plan.h"

namespace apexnpu::rt::optim {
namespace {

void expect_consistent(const WorkPlan& plan, const std::vector<Segment>& groups,
                       const std::vector<std::size_t>& owners, std::size_t block_elements) {
  // Pieces: each group covered exactly, in order.
  ASSERT_EQ(plan.group_count(), groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::size_t at = groups[g].offset;
    for (std::size_t k = plan.group_first(g); k < plan.group_first(g + 1); ++k) {
      const WorkPiece& piece = plan.pieces()[k];
      EXPECT_EQ(piece.group, g);
      EXPECT_EQ(piece.begin, at);
      EXPECT_LE(piece.end - piece.begin, kChunkElements);
      EXPECT_EQ((piece.begin - groups[g].offset) % kChunkElements, 0u);
      at = piece.end;
    }
    EXPECT_EQ(at, groups[g].offset + groups[g].numel);
  }
  // Units: consecutive, non-empty, covering every piece.
  EXPECT_EQ(plan.unit_first(0), 0u);
  for (std::size_t u = 0; u < plan.unit_count(); ++u) EXPECT_LT(plan.unit_first(u), plan.unit_first(u + 1));
  EXPECT_EQ(plan.unit_first(plan.unit_count()), plan.pieces().size());
  // Blocks: consecutive groups and units, whole owners, units inside their block's groups.
  std::size_t next_group = 0, next_unit = 0;
  for (const WorkBlock& block : plan.blocks()) {
    EXPECT_EQ(block.first_group, next_group);
    EXPECT_EQ(block.first_unit, next_unit);
    EXPECT_LT(block.first_group, block.end_group);
    if (block.first_group > 0 && !owners.empty()) {
      EXPECT_NE(owners[block.first_group - 1], owners[block.first_group]);
    }
    auto owner = [&](std::size_t g) { return owners.empty() ? g : owners[g]; };
    std::size_t elements = 0;
    for (std::size_t g = block.first_group; g < block.end_group; ++g) elements += groups[g].numel;
    std::size_t nonempty_owners = 0;  // an empty tensor joins its neighbour's block
    for (std::size_t g = block.first_group; g < block.end_group; ++g) {
      std::size_t owner_elements = 0;
      const std::size_t first = g;
      for (; g + 1 < block.end_group && owner(g + 1) == owner(first); ++g) owner_elements += groups[g].numel;
      owner_elements += groups[g].numel;
      nonempty_owners += owner_elements > 0;
    }
    if (nonempty_owners > 1) {
      EXPECT_LE(elements, block_elements);
    }
    if (block.end_group < groups.size()) {
      std::size_t next_owner_elements = 0;
      for (std::size_t g = block.end_group; g < groups.size() && owner(g) == owner(block.end_group); ++g) {
        next_owner_elements += groups[g].numel;
      }
      EXPECT_GT(elements + next_owner_elements, block_elements);
    }
    for (std::size_t u = block.first_unit; u < block.end_unit; ++u) {
      for (std::size_t k = plan.unit_first(u); k < plan.unit_first(u + 1); ++k) {
        EXPECT_GE(plan.pieces()[k].group, block.first_group);
        EXPECT_LT(plan.pieces()[k].group, block.end_group);
      }
    }
    next_group = block.end_group;
    next_unit = block.end_unit;
  }
  EXPECT_EQ(next_group, groups.size());
  EXPECT_EQ(next_unit, plan.unit_count());
  // small_blocks and large_blocks partition the blocks, in order, by unit count.
  std::vector<std::size_t> all;
  for (const std::size_t b : plan.small_blocks()) {
    EXPECT_LE(plan.blocks()[b].end_unit - plan.blocks()[b].first_unit, 1u);
    all.push_back(b);
  }
  for (const std::size_t b : plan.large_blocks()) {
    EXPECT_GT(plan.blocks()[b].end_unit - plan.blocks()[b].first_unit, 1u);
    all.push_back(b);
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), plan.blocks().size());
  for (std::size_t b = 0; b < all.size(); ++b) EXPECT_EQ(all[b], b);
}

TEST(OptimWorkPlan, PiecesUnitsAndBlocksPartitionTheGroups) {
  std::vector<Segment> groups;
  std::size_t offset = 0;
  for (const std::size_t n : {5u, 200000u, 17u, 0u, 65536u, 65537u, 3000u, 1u, 9000u}) {
    groups.push_back({offset, n});
    offset += (n + 15) / 16 * 16 + 32;
  }
  for (const std::size_t block : {std::size_t{1}, std::size_t{4096}, std::size_t{100000}, kBlockElements}) {
    SCOPED_TRACE(block);
    expect_consistent(WorkPlan(groups, {}, block), groups, {}, block);
  }
  const std::vector<std::size_t> owners = {0, 0, 0, 1, 2, 2, 2, 3, 3};
  expect_consistent(WorkPlan(groups, owners, 10), groups, owners, 10);
  // Default: {5}, {200000}, {17, 0}, {65536}, {65537}, {3000, 1, 9000}.
  const WorkPlan default_plan(groups);
  expect_consistent(default_plan, groups, {}, kBlockElements);
  EXPECT_EQ(default_plan.blocks().size(), 6u);
  EXPECT_EQ(default_plan.large_blocks().size(), 2u);  // 200000 and 65537 span two units or more
  // Block size 1: one block per owner, except owner 1 (an empty tensor), which joins owner 2's.
  EXPECT_EQ(WorkPlan(groups, owners, 1).blocks().size(), 3u);
}

TEST(OptimWorkPlan, EmptyPlanHasNothingToRun) {
  const WorkPlan plan(std::vector<Segment>{});
  EXPECT_EQ(plan.pieces().size(), 0u);
  EXPECT_EQ(plan.unit_count(), 0u);
  EXPECT_EQ(plan.blocks().size(), 0u);
}

}  // namespace
}  // namespace apexnpu::rt::optim
