#include "patch/line_diff.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace apexnpu::patch {

namespace {

// Lines as small integers, so the inner loop compares ints, not strings.
std::pair<std::vector<int>, std::vector<int>> intern(const std::vector<std::string_view>& a,
                                                     const std::vector<std::string_view>& b) {
  std::unordered_map<std::string_view, int> ids;
  auto id_of = [&](std::string_view s) {
    return ids.emplace(s, static_cast<int>(ids.size())).first->second;
  };
  std::vector<int> ia, ib;
  ia.reserve(a.size());
  ib.reserve(b.size());
  for (auto s : a) ia.push_back(id_of(s));
  for (auto s : b) ib.push_back(id_of(s));
  return {ia, ib};
}

}  // namespace

std::vector<Edit> diff_lines(const std::vector<std::string_view>& a,
                             const std::vector<std::string_view>& b) {
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

  // Forward Myers search; trace[d] keeps V for diagonals -d..d (indexed k + d).
  std::vector<std::vector<long>> trace;
  std::vector<long> v(3, 0);  // for d = 0, diagonal k in [-1, 1] via offset 1
  long found_d = -1;
  if (n == 0 && m == 0) found_d = 0;
  std::vector<long> prev;
  for (long d = 0; found_d < 0; ++d) {
    std::vector<long> cur(2 * d + 1, 0);
    for (long k = -d; k <= d; k += 2) {
      long xk;
      auto prev_at = [&](long kk) { return prev[kk + (d - 1)]; };
      if (d == 0) {
        xk = 0;
      } else if (k == -d || (k != d && prev_at(k - 1) < prev_at(k + 1))) {
        xk = prev_at(k + 1);  // down: an insertion
      } else {
        xk = prev_at(k - 1) + 1;  // right: a removal
      }
      long yk = xk - k;
      while (xk < n && yk < m && xs[xk] == ys[yk]) ++xk, ++yk;
      cur[k + d] = xk;
      if (xk >= n && yk >= m) {
        found_d = d;
        break;
      }
    }
    trace.push_back(cur);
    prev = std::move(cur);
  }

  // Walk back from (n, m) through the trace.
  std::vector<Edit> middle;
  long xk = n, yk = m;
  for (long d = found_d; d > 0; --d) {
    const std::vector<long>& pv = trace[d - 1];
    const long k = xk - yk;
    auto prev_at = [&](long kk) { return pv[kk + (d - 1)]; };
    const bool down = k == -d || (k != d && prev_at(k - 1) < prev_at(k + 1));
    const long prev_k = down ? k + 1 : k - 1;
    const long prev_x = prev_at(prev_k);
    const long prev_y = prev_x - prev_k;
    while (xk > (down ? prev_x : prev_x + 1) && yk > (down ? prev_y + 1 : prev_y)) {
      --xk, --yk;
      middle.push_back({EditKind::keep, static_cast<std::size_t>(xk), static_cast<std::size_t>(yk)});
    }
    if (down) {
      --yk;
      middle.push_back({EditKind::insert, static_cast<std::size_t>(xk), static_cast<std::size_t>(yk)});
    } else {
      --xk;
      middle.push_back({EditKind::remove, static_cast<std::size_t>(xk), static_cast<std::size_t>(yk)});
    }
  }
  while (xk > 0 && yk > 0) {
    --xk, --yk;
    middle.push_back({EditKind::keep, static_cast<std::size_t>(xk), static_cast<std::size_t>(yk)});
  }
  std::reverse(middle.begin(), middle.end());

  std::vector<Edit> edits;
  edits.reserve(prefix + middle.size() + suffix);
  for (std::size_t i = 0; i < prefix; ++i) edits.push_back({EditKind::keep, i, i});
  for (const Edit& e : middle) edits.push_back({e.kind, e.old_index + prefix, e.new_index + prefix});
  for (std::size_t i = 0; i < suffix; ++i)
    edits.push_back({EditKind::keep, n_all - suffix + i, m_all - suffix + i});
  return edits;
}

}  // namespace apexnpu::patch
