#include "patch/line_diff.h"

#include <fmt/core.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/error.h"

namespace apexnpu::patch {

namespace {

// Lines as small integers, so the inner loop compares ints, not strings.
std::pair<std::vector<int>, std::vector<int>> intern(const std::vector<std::string_view>& a,
                                                     const std::vector<std::string_view>& b) {
  std::unordered_map<std::string_view, int> ids;
  ids.reserve(a.size() + b.size());
  auto id_of = [&](std::string_view s) {
    return ids.emplace(s, static_cast<int>(ids.size())).first->second;
  };
  std::vector<int> ia, ib;
  ia.reserve(a.size());
  ib.reserve(b.size());
  for (auto s : a) ia.push_back(id_of(s));
  for (auto s : b) ib.push_back(id_of(s));
  return {std::move(ia), std::move(ib)};
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
  Value* add_step(std::size_t count) {
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
};

// The forward Myers search and the walk back over xs[0, n) and ys[0, m): the edits of the
// middle, last first. Step d reaches, on each diagonal k = x - y of -d, -d+2, ..., d, the
// furthest x, kept at trace.step(d)[(k + d) / 2].
template <typename Value>
std::vector<Edit> search(const int* xs, long n, const int* ys, long m) {
  Trace<Value> trace;
  long found_d = n == 0 && m == 0 ? 0 : -1;
  for (long d = 0; found_d < 0; ++d) {
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

}  // namespace

std::vector<Edit> diff_lines(const std::vector<std::string_view>& a,
                             const std::vector<std::string_view>& b) {
  if (a.size() > INT_MAX || b.size() > INT_MAX)
    throw Error(fmt::format("cannot diff files of {} and {} lines", a.size(), b.size()),
                "files of more than 2^31 lines are not supported");
  const auto [x, y] = intern(a, b);
  const std::size_t n_all = x.size(), m_all = y.size();
  // Common prefix and suffix need no search.
  std::size_t prefix = 0;
  while (prefix < n_all && prefix < m_all && x[prefix] == y[prefix]) ++prefix;
  std::size_t suffix = 0;
  while (suffix < n_all - prefix && suffix < m_all - prefix &&
         x[n_all - 1 - suffix] == y[m_all - 1 - suffix])
    ++suffix;
  const long n = static_cast<long>(n_all - prefix - suffix);
  const long m = static_cast<long>(m_all - prefix - suffix);
  const int* xs = x.data() + prefix;
  const int* ys = y.data() + prefix;

  // x never exceeds n + d <= 2n + m: 16 bits suffice for any source file.
  std::vector<Edit> middle = 2 * n + m <= INT16_MAX ? search<std::int16_t>(xs, n, ys, m)
                                                    : search<int>(xs, n, ys, m);

  std::vector<Edit> edits;
  edits.reserve(prefix + middle.size() + suffix);
  for (std::size_t i = 0; i < prefix; ++i) edits.push_back({EditKind::keep, i, i});
  for (auto e = middle.rbegin(); e != middle.rend(); ++e)
    edits.push_back({e->kind, e->old_index + prefix, e->new_index + prefix});
  for (std::size_t i = 0; i < suffix; ++i)
    edits.push_back({EditKind::keep, n_all - suffix + i, m_all - suffix + i});
  return edits;
}

}  // namespace apexnpu::patch
