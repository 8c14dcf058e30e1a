#include "patch/line_diff.h"

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "patch/split_diff.h"

namespace apexnpu::patch {

namespace {

// Lines as small integers, so the inner loop compares ints, not strings.
struct Interned {
  std::vector<int> a, b;
  std::size_t distinct;
};

Interned intern(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  std::unordered_map<std::string_view, int> ids;
  ids.reserve(a.size() + b.size());
  auto id_of = [&](std::string_view s) { return ids.emplace(s, static_cast<int>(ids.size())).first->second; };
  std::vector<int> ia, ib;
  ia.reserve(a.size());
  ib.reserve(b.size());
  for (auto s : a) ia.push_back(id_of(s));
  for (auto s : b) ib.push_back(id_of(s));
  return {std::move(ia), std::move(ib), ids.size()};
}

// The search's values, step by step: step d keeps d + 1 of them, and the walk back reads them
// all. Steps are laid end to end in large blocks that never move (growing one array copied it
// again and again, and that copying and its page faults were most of make-patch's time), and
// are left uninitialised: each value is written before it is read. Values are x positions, at
// most n + d: 16 bits hold them for any source file, which halves the memory a long diff
// touches (and its page faults).
template <typename Value>
class Trace {
 public:
  std::size_t values() const { return values_; }
  Value* add_step(std::size_t count) {
    values_ += count;
    if (count > left_) {
      const std::size_t size = std::max(count, block_size);
      blocks_.push_back(std::make_unique_for_overwrite<Value[]>(size));
      next_ = blocks_.back().get();
      left_ = size;
    }
    Value* step = next_;
    next_ += count;
    left_ -= count;
    steps_.push_back(step);
    return step;
  }
  const Value* step(long d) const { return steps_[static_cast<std::size_t>(d)]; }

 private:
  static constexpr std::size_t block_size = std::size_t{1} << 18;  // values per block
  std::vector<std::unique_ptr<Value[]>> blocks_;
  std::vector<Value*> steps_;
  Value* next_ = nullptr;
  std::size_t left_ = 0;
  std::size_t values_ = 0;
};

// The most memory the whole search's trace may take: it grows with the square of the edit's
// length, so past this the split search (linear memory) takes over. 64 MiB keeps every edit of
// up to about 8,000 lines (5,800 in files of over 10,900 lines) on the whole search, whose
// scripts make-patch has always written.
constexpr std::size_t kTraceBudget = std::size_t{64} << 20;

// The forward Myers search and the walk back over xs[0, n) and ys[0, m): the edits of the
// middle, last first; nullopt when its trace would outgrow kTraceBudget. Step d reaches, on each
// diagonal k = x - y of -d, -d+2, ..., d, the furthest x, kept at trace.step(d)[(k + d) / 2].
template <typename Value>
std::optional<std::vector<Edit>> search(const int* xs, long n, const int* ys, long m) {
  Trace<Value> trace;
  long found_d = n == 0 && m == 0 ? 0 : -1;
  for (long d = 0; found_d < 0; ++d) {
    if ((trace.values() + static_cast<std::size_t>(d) + 1) * sizeof(Value) > kTraceBudget)
      return std::nullopt;
    Value* cur = trace.add_step(static_cast<std::size_t>(d) + 1);
    const Value* prev = d == 0 ? nullptr : trace.step(d - 1);
    for (long k = -d, i = 0; k <= d; k += 2, ++i) {
      // prev[i - 1] is diagonal k - 1 of step d - 1, prev[i] diagonal k + 1.
      long xk;
      if (d == 0)
        xk = 0;
      else if (k == -d || (k != d && prev[i - 1] < prev[i]))
        xk = prev[i];  // down: an insertion
      else
        xk = prev[i - 1] + 1;  // right: a removal
      long yk = xk - k;
      while (xk < n && yk < m && xs[xk] == ys[yk]) ++xk, ++yk;
      cur[i] = static_cast<Value>(xk);
      if (xk >= n && yk >= m) {
        found_d = d;
        break;
      }
    }
  }

  std::vector<Edit> middle;
  long xk = n, yk = m;
  auto keep_back = [&] {
    --xk, --yk;
    middle.push_back({EditKind::keep, static_cast<std::size_t>(xk), static_cast<std::size_t>(yk)});
  };
  for (long d = found_d; d > 0; --d) {
    const Value* prev = trace.step(d - 1);
    const long k = xk - yk;
    const long i = (k + d) / 2;
    const bool down = k == -d || (k != d && prev[i - 1] < prev[i]);
    const long prev_k = down ? k + 1 : k - 1;
    const long prev_x = down ? prev[i] : prev[i - 1];
    const long prev_y = prev_x - prev_k;
    while (xk > (down ? prev_x : prev_x + 1) && yk > (down ? prev_y + 1 : prev_y)) keep_back();
    if (down) {
      --yk;
      middle.push_back({EditKind::insert, static_cast<std::size_t>(xk), static_cast<std::size_t>(yk)});
    } else {
      --xk;
      middle.push_back({EditKind::remove, static_cast<std::size_t>(xk), static_cast<std::size_t>(yk)});
    }
  }
  while (xk > 0 && yk > 0) keep_back();
  return middle;
}

// The split search's changed lines as edits, last first, each gap's removals before its
// insertions (as the filtered search's gaps are).
std::vector<Edit> edits_last_first(const ChangedLines& changed) {
  const std::size_t n = changed.removed.size(), m = changed.inserted.size();
  std::vector<Edit> edits;
  std::size_t x = 0, y = 0;
  while (x < n || y < m) {
    while (x < n && changed.removed[x]) edits.push_back({EditKind::remove, x++, y});
    while (y < m && changed.inserted[y]) edits.push_back({EditKind::insert, x, y++});
    if (x < n && y < m) {
      edits.push_back({EditKind::keep, x++, y++});
    } else {  // one side is used up: the rest of the other is all flagged
      for (; x < n; ++x) edits.push_back({EditKind::remove, x, y});
      for (; y < m; ++y) edits.push_back({EditKind::insert, x, y});
    }
  }
  std::reverse(edits.begin(), edits.end());
  return edits;
}

// The whole search where its trace fits (the scripts make-patch has always written), else the
// split search. x never exceeds n + d <= 2n + m: 16 bits suffice for any source file.
std::vector<Edit> search_any_width(const int* xs, long n, const int* ys, long m) {
  std::optional<std::vector<Edit>> whole =
      2 * n + m <= INT16_MAX ? search<std::int16_t>(xs, n, ys, m) : search<int>(xs, n, ys, m);
  if (whole) return std::move(*whole);
  return edits_last_first(split_diff(xs, n, ys, m));
}

// The shortest script over xs[0, n) and ys[0, m), first edit first. A line found on one side
// only can be in no common subsequence, so the search runs over the others (in a rewritten file,
// most of its new lines: the search's cost grows with the square of the edit's length), and
// each gap between two kept lines becomes its removals, then its insertions: a shortest script,
// and on every input tried the one the search over all lines picks (line_diff_test.cpp).
std::vector<Edit> middle_script(const int* xs, long n, const int* ys, long m, std::size_t distinct) {
  std::vector<std::uint8_t> sides(distinct, 0);  // bit 1: a line of xs, bit 2: of ys
  for (long i = 0; i < n; ++i) sides[static_cast<std::size_t>(xs[i])] |= 1;
  for (long j = 0; j < m; ++j) sides[static_cast<std::size_t>(ys[j])] |= 2;
  std::vector<std::size_t> x_lines, y_lines;  // positions of the lines found on both sides
  std::vector<int> x_ids, y_ids;
  for (long i = 0; i < n; ++i)
    if (sides[static_cast<std::size_t>(xs[i])] == 3)
      x_lines.push_back(static_cast<std::size_t>(i)), x_ids.push_back(xs[i]);
  for (long j = 0; j < m; ++j)
    if (sides[static_cast<std::size_t>(ys[j])] == 3)
      y_lines.push_back(static_cast<std::size_t>(j)), y_ids.push_back(ys[j]);

  std::vector<Edit> last_first;
  if (static_cast<long>(x_ids.size()) == n && static_cast<long>(y_ids.size()) == m) {
    last_first = search_any_width(xs, n, ys, m);
    return {last_first.rbegin(), last_first.rend()};
  }
  last_first = search_any_width(x_ids.data(), static_cast<long>(x_ids.size()), y_ids.data(),
                                static_cast<long>(y_ids.size()));
  std::vector<Edit> edits;
  edits.reserve(static_cast<std::size_t>(n + m));
  std::size_t old_line = 0, new_line = 0;  // lines passed so far
  auto gap_to = [&](std::size_t old_end, std::size_t new_end) {
    for (; old_line < old_end; ++old_line) edits.push_back({EditKind::remove, old_line, new_line});
    for (; new_line < new_end; ++new_line) edits.push_back({EditKind::insert, old_line, new_line});
  };
  for (auto e = last_first.rbegin(); e != last_first.rend(); ++e) {
    if (e->kind != EditKind::keep) continue;
    gap_to(x_lines[e->old_index], y_lines[e->new_index]);
    edits.push_back({EditKind::keep, old_line++, new_line++});
  }
  gap_to(static_cast<std::size_t>(n), static_cast<std::size_t>(m));
  return edits;
}

}  // namespace

std::vector<Edit> diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
  if (a.size() > INT_MAX || b.size() > INT_MAX)
    throw Error(fmt::format("cannot diff files of {} and {} lines", a.size(), b.size()),
                "files of more than 2^31 lines are not supported");
  const auto [x, y, distinct] = intern(a, b);
  const std::size_t n_all = x.size(), m_all = y.size();
  // Common prefix and suffix need no search.
  std::size_t prefix = 0;
  while (prefix < n_all && prefix < m_all && x[prefix] == y[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < n_all - prefix && suffix < m_all - prefix && x[n_all - 1 - suffix] == y[m_all - 1 - suffix])
    ++suffix;
  const long n = static_cast<long>(n_all - prefix - suffix);
  const long m = static_cast<long>(m_all - prefix - suffix);
  const int* xs = x.data() + prefix;
  const int* ys = y.data() + prefix;

  const std::vector<Edit> middle = middle_script(xs, n, ys, m, distinct);
  std::vector<Edit> edits;
  edits.reserve(prefix + middle.size() + suffix);
  for (std::size_t i = 0; i < prefix; ++i) edits.push_back({EditKind::keep, i, i});
  for (const Edit& e : middle) edits.push_back({e.kind, e.old_index + prefix, e.new_index + prefix});
  for (std::size_t i = 0; i < suffix; ++i)
    edits.push_back({EditKind::keep, n_all - suffix + i, m_all - suffix + i});
  return edits;
}

}  // namespace apexnpu::patch
