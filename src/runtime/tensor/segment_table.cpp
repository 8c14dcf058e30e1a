#include "tensor/segment_table.h"

#include <algorithm>

#include "exec/chunking.h"
#include "exec/error.h"

namespace apexnpu::rt {

SegmentTable::SegmentTable(std::vector<Segment> segments) : segments_(std::move(segments)) {
  // Overlap check on the non-empty segments sorted by offset (they may be listed in any order).
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    if (s.offset + s.numel < s.offset)
      throw ArgumentError(concat("segment ", i, ": offset + numel overflows"));
    if (s.numel != 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return segments_[a].offset < segments_[b].offset; });
  for (std::size_t k = 0; k + 1 < order.size(); ++k) {
    const Segment& s = segments_[order[k]];
    const Segment& next = segments_[order[k + 1]];
    if (s.offset + s.numel > next.offset)
      throw ArgumentError(concat("segments ", order[k], " [", s.offset, ", ", s.offset + s.numel, ") and ",
                                 order[k + 1], " [", next.offset, ", ", next.offset + next.numel,
                                 ") overlap"));
  }
  first_chunk_.clear();
  first_chunk_.reserve(segments_.size() + 1);
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = segments_[i];
    first_chunk_.push_back(chunks_.size());
    for (std::size_t c = 0; c < chunk_count(s.numel); ++c) {
      const ChunkRange r = chunk_range(c, s.numel);
      chunks_.push_back({i, s.offset + r.begin, s.offset + r.end});
    }
    extent_ = std::max(extent_, s.offset + s.numel);
    total_numel_ += s.numel;
  }
  first_chunk_.push_back(chunks_.size());
}

}  // namespace apexnpu::rt
