#pragma once
// Where each original tensor lives inside a combined buffer (offset and numel, in elements),
// plus a precomputed list of work items for per-tensor reductions, so kernels allocate nothing
// per call.
//
// Work items: every segment is cut into pieces of at most kChunkElements elements counted from
// the segment's own start; items are listed segment by segment, in order. A per-tensor
// reduction computes one partial per item (in parallel, any thread count) and then adds the
// partials of each segment in item order: the result is bit-identical for any thread count.
//
//   const auto items = table.chunks();
//   parallel_for(items.size(), [&](std::size_t k) { partial[k] = f(buf + items[k].begin, items[k].size());
//   }); for (std::size_t s = 0; s < table.size(); ++s)
//     for (std::size_t k = table.first_chunk(s); k < table.first_chunk(s + 1); ++k) norm[s] += partial[k];
#include <cstddef>
#include <span>
#include <vector>

namespace apexnpu::rt {

struct Segment {
  std::size_t offset;  // element offset in the combined buffer
  std::size_t numel;
};

struct SegmentChunk {
  std::size_t segment;  // index into the table
  std::size_t begin;    // element range in the combined buffer, [begin, end)
  std::size_t end;
  std::size_t size() const noexcept { return end - begin; }
};

class SegmentTable {
 public:
  SegmentTable() = default;
  // Segments in list order; they may not overlap (ArgumentError otherwise) but may leave gaps.
  explicit SegmentTable(std::vector<Segment> segments);
  // One segment covering [0, numel).
  static SegmentTable single(std::size_t numel) { return SegmentTable({Segment{0, numel}}); }

  std::size_t size() const noexcept { return segments_.size(); }
  bool empty() const noexcept { return segments_.empty(); }
  const Segment& operator[](std::size_t i) const noexcept { return segments_[i]; }
  std::span<const Segment> segments() const noexcept { return segments_; }
  // One past the last element any segment covers: the buffer must be at least this long.
  std::size_t extent() const noexcept { return extent_; }
  // Sum of the segments' numel.
  std::size_t total_numel() const noexcept { return total_numel_; }

  std::span<const SegmentChunk> chunks() const noexcept { return chunks_; }
  // Index of segment s's first item in chunks(); first_chunk(size()) == chunks().size().
  // An empty segment has no items (first_chunk(s) == first_chunk(s + 1)).
  std::size_t first_chunk(std::size_t segment) const noexcept { return first_chunk_[segment]; }

 private:
  std::vector<Segment> segments_;
  std::vector<SegmentChunk> chunks_;
  std::vector<std::size_t> first_chunk_{0};
  std::size_t extent_ = 0;
  std::size_t total_numel_ = 0;
};

}  // namespace apexnpu::rt
