#include "patch/split_diff.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace apexnpu::patch {

namespace {

constexpr long kNone = LONG_MIN;  // a diagonal no path of this step reaches
constexpr long kLeastBound = 256;

// xs[x0, x1) against ys[y0, y1).
struct Box {
  long x0, y0, x1, y1;
};

struct Point {
  long x, y;
};

// The diagonals k = x - y searched at step d from a corner on diagonal `mid`: every other one
// from mid - d to mid + d, those inside [low, high], keeping the parity of mid + d.
long first_diagonal(long mid, long d, long low) {
  const long k = mid - d;
  return k >= low ? k : low + ((low - k) & 1);
}
long last_diagonal(long mid, long d, long high) {
  const long k = mid + d;
  return k <= high ? k : high - ((k - high) & 1);
}

// The two searches of one box and the point where a box is split. Forward: at step d, the
// furthest x each diagonal reaches from (x0, y0) with d edits; backward: the least x from
// (x1, y1). Both arrays span every diagonal of the whole diff and are reused box after box.
class MiddleSearch {
 public:
  MiddleSearch(const int* xs, long n, const int* ys, long m, long bound)
      : xs_(xs),
        ys_(ys),
        offset_(m + 1),
        bound_(bound),
        forward_(static_cast<std::size_t>(n + m + 3)),
        backward_(static_cast<std::size_t>(n + m + 3)) {}

  // A point on a path through the box (a shortest one while the edit distance stays within the
  // bound), other than its corners. The box starts and ends with a difference on both sides.
  Point split(const Box& b) {
    const long low = b.x0 - b.y1, high = b.x1 - b.y0;
    const long fmid = b.x0 - b.y0, bmid = b.x1 - b.y1;
    const bool odd = ((fmid - bmid) & 1) != 0;
    F(fmid) = b.x0;
    B(bmid) = b.x1;
    for (long d = 1;; ++d) {
      // Forward step d; with an odd difference of diagonals the paths can first meet here.
      const long flo = first_diagonal(fmid, d, low), fhi = last_diagonal(fmid, d, high);
      const long pflo = first_diagonal(fmid, d - 1, low), pfhi = last_diagonal(fmid, d - 1, high);
      const long pblo = first_diagonal(bmid, d - 1, low), pbhi = last_diagonal(bmid, d - 1, high);
      for (long k = flo; k <= fhi; k += 2) {
        long x = kNone;
        if (k - 1 >= pflo && k - 1 <= pfhi && F(k - 1) != kNone && F(k - 1) < b.x1) x = F(k - 1) + 1;
        if (k + 1 >= pflo && k + 1 <= pfhi && F(k + 1) != kNone && F(k + 1) - (k + 1) < b.y1)
          x = std::max(x, F(k + 1));
        if (x == kNone) {
          F(k) = kNone;
          continue;
        }
        long y = x - k;
        while (x < b.x1 && y < b.y1 && xs_[x] == ys_[y]) ++x, ++y;
        F(k) = x;
        if (odd && k >= pblo && k <= pbhi && B(k) != kNone && B(k) <= x) return {x, y};
      }
      // Backward step d; with an even difference the paths meet here.
      const long blo = first_diagonal(bmid, d, low), bhi = last_diagonal(bmid, d, high);
      for (long k = blo; k <= bhi; k += 2) {
        long x = kNone;
        if (k + 1 >= pblo && k + 1 <= pbhi && B(k + 1) != kNone && B(k + 1) > b.x0) x = B(k + 1) - 1;
        if (k - 1 >= pblo && k - 1 <= pbhi && B(k - 1) != kNone && B(k - 1) - (k - 1) > b.y0)
          x = x == kNone ? B(k - 1) : std::min(x, B(k - 1));
        if (x == kNone) {
          B(k) = kNone;
          continue;
        }
        long y = x - k;
        while (x > b.x0 && y > b.y0 && xs_[x - 1] == ys_[y - 1]) --x, --y;
        B(k) = x;
        if (!odd && k >= flo && k <= fhi && F(k) != kNone && F(k) >= x) return {x, y};
      }
      if (d >= bound_) return furthest(b, flo, fhi, blo, bhi);
    }
  }

 private:
  long& F(long k) { return forward_[static_cast<std::size_t>(k + offset_)]; }
  long& B(long k) { return backward_[static_cast<std::size_t>(k + offset_)]; }

  // Past the bound: the point either search has got furthest from its corner.
  Point furthest(const Box& b, long flo, long fhi, long blo, long bhi) {
    Point forward{kNone, kNone}, backward{kNone, kNone};
    for (long k = flo; k <= fhi; k += 2)
      if (F(k) != kNone && (forward.x == kNone || 2 * F(k) - k > forward.x + forward.y))
        forward = {F(k), F(k) - k};
    for (long k = blo; k <= bhi; k += 2)
      if (B(k) != kNone && (backward.x == kNone || 2 * B(k) - k < backward.x + backward.y))
        backward = {B(k), B(k) - k};
    const long forward_gain = forward.x == kNone ? -1 : forward.x + forward.y - b.x0 - b.y0;
    const long backward_gain = backward.x == kNone ? -1 : b.x1 + b.y1 - backward.x - backward.y;
    return forward_gain >= backward_gain ? forward : backward;
  }

  const int* xs_;
  const int* ys_;
  long offset_;
  long bound_;
  std::vector<long> forward_, backward_;
};

}  // namespace

ChangedLines split_diff(const int* xs, long n, const int* ys, long m, long cost_bound) {
  if (cost_bound <= 0)
    cost_bound = std::max(kLeastBound, static_cast<long>(std::sqrt(static_cast<double>(n + m))));
  ChangedLines changed{std::vector<bool>(static_cast<std::size_t>(n)),
                       std::vector<bool>(static_cast<std::size_t>(m))};
  MiddleSearch search(xs, n, ys, m, cost_bound);
  std::vector<Box> boxes{{0, 0, n, m}};  // a stack: the depth of the split is not bounded
  while (!boxes.empty()) {
    Box b = boxes.back();
    boxes.pop_back();
    while (b.x0 < b.x1 && b.y0 < b.y1 && xs[b.x0] == ys[b.y0]) ++b.x0, ++b.y0;
    while (b.x0 < b.x1 && b.y0 < b.y1 && xs[b.x1 - 1] == ys[b.y1 - 1]) --b.x1, --b.y1;
    if (b.x0 == b.x1 || b.y0 == b.y1) {
      for (long x = b.x0; x < b.x1; ++x) changed.removed[static_cast<std::size_t>(x)] = true;
      for (long y = b.y0; y < b.y1; ++y) changed.inserted[static_cast<std::size_t>(y)] = true;
      continue;
    }
    const Point p = search.split(b);
    const bool inside = p.x >= b.x0 && p.x <= b.x1 && p.y >= b.y0 && p.y <= b.y1 &&
                        !(p.x == b.x0 && p.y == b.y0) && !(p.x == b.x1 && p.y == b.y1);
    if (!inside) {  // never expected; a script that changes the whole box is still a valid one
      for (long x = b.x0; x < b.x1; ++x) changed.removed[static_cast<std::size_t>(x)] = true;
      for (long y = b.y0; y < b.y1; ++y) changed.inserted[static_cast<std::size_t>(y)] = true;
      continue;
    }
    boxes.push_back({p.x, p.y, b.x1, b.y1});
    boxes.push_back({b.x0, b.y0, p.x, p.y});
  }
  return changed;
}

}  // namespace apexnpu::patch
