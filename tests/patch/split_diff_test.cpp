// split_diff, the linear-memory search diff_lines falls back to past its trace budget: every
// script it gives turns a into b; within its cost bound it is a shortest one; past it, still a
// valid one, on files that make the whole search's memory explode (lines permuted).
#include "patch/split_diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>

#include "lcs.h"
#include "patch/line_diff.h"
#include "random_lines.h"

namespace apexnpu::patch {
namespace {

struct Ids {
  std::vector<int> a, b;
};

Ids intern(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::unordered_map<std::string, int> ids;
  Ids out;
  for (const auto& l : a) out.a.push_back(ids.emplace(l, static_cast<int>(ids.size())).first->second);
  for (const auto& l : b) out.b.push_back(ids.emplace(l, static_cast<int>(ids.size())).first->second);
  return out;
}

// The lines flagged in neither side pair up equal, in order; returns how many lines changed.
std::size_t check_valid(const Ids& in, const ChangedLines& c) {
  EXPECT_EQ(c.removed.size(), in.a.size());
  EXPECT_EQ(c.inserted.size(), in.b.size());
  std::vector<int> kept_a, kept_b;
  std::size_t changes = 0;
  for (std::size_t i = 0; i < in.a.size(); ++i) c.removed[i] ? ++changes : (kept_a.push_back(in.a[i]), 0u);
  for (std::size_t j = 0; j < in.b.size(); ++j) c.inserted[j] ? ++changes : (kept_b.push_back(in.b[j]), 0u);
  EXPECT_EQ(kept_a, kept_b) << "the kept lines differ: not a script from a to b";
  return changes;
}

ChangedLines run(const Ids& in, long bound) {
  return split_diff(in.a.data(), static_cast<long>(in.a.size()), in.b.data(), static_cast<long>(in.b.size()),
                    bound);
}

TEST(SplitDiff, WithinItsBoundTheScriptIsAShortestOne) {
  for (unsigned seed = 0; seed < 600; ++seed) {
    CaseMaker maker(seed);
    const std::vector<std::string> a = maker.file(0, 80);
    std::vector<std::string> b = seed % 3 == 0 ? maker.file(0, 80) : a;
    if (seed % 3 != 0) maker.edit(b, 15);
    const Ids in = intern(a, b);
    const std::size_t changes = check_valid(in, run(in, 1 << 20));
    EXPECT_EQ(changes, a.size() + b.size() - 2 * lcs(in.a, in.b)) << "seed " << seed;
    if (HasFailure()) return;
  }
}

TEST(SplitDiff, PastItsBoundTheScriptStaysValid) {
  // A bound of one step splits every box where either search got furthest at once.
  for (unsigned seed = 0; seed < 600; ++seed) {
    CaseMaker maker(5000 + seed);
    const std::vector<std::string> a = maker.file(0, 120);
    std::vector<std::string> b = seed % 2 == 0 ? maker.file(0, 120) : a;
    if (seed % 2 != 0) maker.edit(b, 30);
    const Ids in = intern(a, b);
    for (long bound : {1L, 2L, 3L, 7L}) check_valid(in, run(in, bound));
    if (HasFailure()) return;
  }
}

std::vector<std::string> numbered(std::size_t count) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < count; ++i) lines.push_back("line " + std::to_string(i) + " of the file\n");
  return lines;
}

TEST(SplitDiff, APermutedFileGivesAValidScriptThroughDiffLines) {
  // Every line on both sides, in another order: the edit is about twice the file, past the whole
  // search's trace budget, so diff_lines takes the split search (what took gigabytes before).
  const std::vector<std::string> a = numbered(40000);
  std::vector<std::string> b = a;
  std::shuffle(b.begin(), b.end(), std::mt19937(3));
  const std::vector<std::string_view> av(a.begin(), a.end()), bv(b.begin(), b.end());
  const std::vector<Edit> edits = diff_lines(av, bv);
  std::vector<std::string_view> rebuilt;
  std::size_t old_line = 0, new_line = 0;
  bool removal_after_insertion = false;
  EditKind last = EditKind::keep;
  for (const Edit& e : edits) {
    if (e.kind == EditKind::keep) {
      EXPECT_EQ(e.old_index, old_line++);
      EXPECT_EQ(e.new_index, new_line++);
      rebuilt.push_back(av[e.old_index]);
    } else if (e.kind == EditKind::remove) {
      EXPECT_EQ(e.old_index, old_line++);
      removal_after_insertion |= last == EditKind::insert;
    } else {
      EXPECT_EQ(e.new_index, new_line++);
      rebuilt.push_back(bv[e.new_index]);
    }
    last = e.kind;
  }
  EXPECT_EQ(rebuilt, bv);
  EXPECT_FALSE(removal_after_insertion) << "a gap's removals come before its insertions";
}

TEST(SplitDiff, ScatteredEditsOfALongFileAreShortestWithinTheBound) {
  // A long edit (6,000 changed lines) under a generous bound: still a shortest script, found in
  // memory linear in the files.
  std::vector<std::string> a = numbered(9000), b = a;
  int fresh = 0;
  for (std::size_t i = 0; i < b.size(); i += 3) b[i] = "changed " + std::to_string(fresh++) + "\n";
  const Ids in = intern(a, b);
  const std::size_t changes = check_valid(in, run(in, 1 << 20));
  EXPECT_EQ(changes, 2u * static_cast<std::size_t>(fresh));
}

}  // namespace
}  // namespace apexnpu::patch
