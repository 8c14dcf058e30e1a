// diff_lines: every edit script turns a into b, is a shortest one, and is exactly the one the
// plain textbook search (a vector per step, kept whole) picks after the common prefix and suffix
// are set aside, as the writer has always done. The writer's hunks follow from the script, so a
// different choice among equally short scripts would change, byte for byte, patches that
// make-patch wrote before.
#include "patch/line_diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "lcs.h"
#include "random_lines.h"

namespace apexnpu::patch {
namespace {

// Forward greedy Myers search with its whole trace, a vector per step: the reference for which
// shortest script is chosen.
std::vector<Edit> textbook_search(const std::vector<std::string_view>& a,
                                  const std::vector<std::string_view>& b) {
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
  std::vector<std::vector<long>> trace;  // trace[d][k + d]
  long found = n == 0 && m == 0 ? 0 : -1;
  for (long d = 0; found < 0; ++d) {
    std::vector<long> v(2 * d + 1, 0);
    auto prev = [&](long k) { return trace[d - 1][k + d - 1]; };
    for (long k = -d; k <= d && found < 0; k += 2) {
      long x = d == 0 ? 0 : k == -d || (k != d && prev(k - 1) < prev(k + 1)) ? prev(k + 1) : prev(k - 1) + 1;
      while (x < n && x - k < m && a[x] == b[x - k]) ++x;
      v[k + d] = x;
      if (x >= n && x - k >= m) found = d;
    }
    trace.push_back(std::move(v));
  }
  std::vector<Edit> edits;  // last first
  long x = n, y = m;
  auto emit = [&](EditKind kind) {
    edits.push_back({kind, static_cast<std::size_t>(x), static_cast<std::size_t>(y)});
  };
  auto keep_back_to = [&](long px, long py) {
    while (x > px && y > py) {
      --x, --y;
      emit(EditKind::keep);
    }
  };
  for (long d = found; d > 0; --d) {
    auto prev = [&](long k) { return trace[d - 1][k + d - 1]; };
    const long k = x - y;
    const bool down = k == -d || (k != d && prev(k - 1) < prev(k + 1));
    const long px = down ? prev(k + 1) : prev(k - 1) + 1;  // where this step's snake starts
    keep_back_to(px, px - k);
    if (down) {
      --y;
      emit(EditKind::insert);
    } else {
      --x;
      emit(EditKind::remove);
    }
  }
  keep_back_to(0, 0);
  std::reverse(edits.begin(), edits.end());
  return edits;
}

// The common prefix and suffix kept, the search run on what is between.
std::vector<Edit> textbook_diff(const std::vector<std::string_view>& a,
                                const std::vector<std::string_view>& b) {
  std::size_t prefix = 0, suffix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  std::vector<Edit> edits;
  for (std::size_t i = 0; i < prefix; ++i) edits.push_back({EditKind::keep, i, i});
  for (const Edit& e :
       textbook_search({a.begin() + prefix, a.end() - suffix}, {b.begin() + prefix, b.end() - suffix}))
    edits.push_back({e.kind, e.old_index + prefix, e.new_index + prefix});
  for (std::size_t i = suffix; i > 0; --i) edits.push_back({EditKind::keep, a.size() - i, b.size() - i});
  return edits;
}

bool same(const std::vector<Edit>& x, const std::vector<Edit>& y) {
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const Edit& p, const Edit& q) {
    return p.kind == q.kind && p.old_index == q.old_index && p.new_index == q.new_index;
  });
}

std::vector<std::string_view> views(const std::vector<std::string>& lines) {
  return {lines.begin(), lines.end()};
}

void check(const std::vector<std::string>& a_lines, const std::vector<std::string>& b_lines,
           bool check_minimal) {
  const auto a = views(a_lines), b = views(b_lines);
  const std::vector<Edit> edits = diff_lines(a, b);
  std::vector<std::string_view> rebuilt;
  std::size_t changes = 0;
  for (const Edit& e : edits) {
    if (e.kind != EditKind::remove)
      rebuilt.push_back(e.kind == EditKind::keep ? a[e.old_index] : b[e.new_index]);
    changes += e.kind != EditKind::keep;
  }
  ASSERT_EQ(rebuilt, b) << "the script does not turn a into b";
  if (check_minimal) {
    EXPECT_EQ(changes, a.size() + b.size() - 2 * lcs(a, b)) << "not a shortest script";
  }
  EXPECT_TRUE(same(edits, textbook_diff(a, b))) << "another shortest script than the textbook search's";
}

TEST(LineDiff, EmptyAndIdenticalSides) {
  check({}, {}, true);
  check({}, {"x\n", "y\n"}, true);
  check({"x\n", "y\n"}, {}, true);
  check({"x\n", "y\n"}, {"x\n", "y\n"}, true);
}

TEST(LineDiff, SmallRandomEditsAreShortestAndTheTextbookChoice) {
  for (unsigned seed = 0; seed < 400; ++seed) {
    CaseMaker maker(seed);
    const std::vector<std::string> a = maker.file(0, 60);
    std::vector<std::string> b = a;
    maker.edit(b, 12);
    check(a, b, true);
    if (HasFatalFailure()) return;
  }
}

TEST(LineDiff, UnrelatedFilesAreTheTextbookChoice) {
  // Whole rewrites: the largest traces, where an indexing slip would show.
  for (unsigned seed = 0; seed < 40; ++seed) {
    CaseMaker maker(1000 + seed);
    check(maker.file(0, 400), maker.file(0, 900), seed < 10);
    if (HasFatalFailure()) return;
  }
}

TEST(LineDiff, BothTraceWidthsGiveTheTextbookChoice) {
  // The trace keeps 16-bit values while 2n + m <= 32767 and ints beyond: files on both sides of
  // that line, with scattered edits.
  for (const std::size_t lines : {10900u, 10930u, 11000u, 16000u}) {
    CaseMaker maker(lines);
    const std::vector<std::string> a = maker.file(static_cast<int>(lines), static_cast<int>(lines));
    std::vector<std::string> b = a;
    maker.edit(b, 40);
    check(a, b, false);
    if (HasFatalFailure()) return;
  }
}

TEST(LineDiff, LinesOnOneSideOnlyKeepTheTextbookChoice) {
  // The search skips lines found on one side only (no script can keep them): on files full of
  // them, a few shared lines among many unique ones, the script is still the textbook's.
  for (unsigned seed = 0; seed < 3000; ++seed) {
    CaseMaker maker(seed);
    int next_unique = 0;
    const int shared = maker.pick(0, 30);
    auto shared_line = [&] { return "shared " + std::to_string(maker.pick(0, shared)) + "\n"; };
    auto unique_line = [&](char side) { return side + std::to_string(next_unique++) + "\n"; };
    std::vector<std::string> a;
    for (int i = maker.pick(0, 120); i > 0; --i)
      a.push_back(maker.pick(0, 4) == 0 ? unique_line('a') : shared_line());
    std::vector<std::string> b = a;
    maker.edit(b, 40, [&] { return maker.pick(0, 1) == 0 ? unique_line('b') : shared_line(); });
    check(a, b, true);
    if (HasFatalFailure()) return;
  }
}

TEST(LineDiff, AFileRewrittenAroundItsOldLinesIsTheTextbookChoice) {
  // make-patch's longest diff in Ascend's edit: a file tripled in length, its old lines kept
  // between long runs of new ones.
  CaseMaker maker(7);
  std::vector<std::string> a = maker.file(500, 500), b;
  int fresh = 0;
  for (const std::string& line : a) {
    if (maker.pick(0, 5) != 0) b.push_back(line);
    for (int k = maker.pick(0, 4); k > 0; --k) b.push_back("new " + std::to_string(fresh++) + "\n");
  }
  check(a, b, true);
}

}  // namespace
}  // namespace apexnpu::patch
