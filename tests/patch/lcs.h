#pragma once
// The length of a longest common subsequence of two sequences, by dynamic programming: the
// reference a shortest edit script is checked against (its changes must number
// n + m - 2 * lcs), for the line diff and the split diff tests alike.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace apexnpu::patch {

template <typename T>
std::size_t lcs(const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<std::size_t> row(b.size() + 1, 0), next(b.size() + 1, 0);
  for (std::size_t i = a.size(); i-- > 0;) {
    for (std::size_t j = b.size(); j-- > 0;)
      next[j] = a[i] == b[j] ? row[j + 1] + 1 : std::max(row[j], next[j + 1]);
    std::swap(row, next);
  }
  return row[0];
}

}  // namespace apexnpu::patch
