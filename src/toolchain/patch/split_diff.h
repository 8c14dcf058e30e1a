#pragma once
// The line diff for when the whole search does not fit: Myers' divide and conquer, as GNU diff
// and git's xdiff search, in memory linear in the files. Each box of the edit graph is split at
// a point of a shortest path through it (the middle snake, found searching from both ends at
// once) and its halves searched the same way. Past a cost bound (a box whose edit distance
// exceeds it), the box is split instead where either search has got furthest: the script stays
// a valid one, no longer the shortest, and a pathological file costs about (lines)^1.5 steps,
// not (lines)^2 memory.
#include <cstddef>
#include <vector>

namespace apexnpu::patch {

// Which lines of xs[0, n) are removed and which of ys[0, m) inserted, as two vectors of flags;
// the lines flagged in neither are kept, in order, and are equal pairwise.
struct ChangedLines {
  std::vector<bool> removed;   // n flags
  std::vector<bool> inserted;  // m flags
};

// `cost_bound` 0: the square root of the lines in the box, at least 256 (as xdiff bounds it).
ChangedLines split_diff(const int* xs, long n, const int* ys, long m, long cost_bound = 0);

}  // namespace apexnpu::patch
