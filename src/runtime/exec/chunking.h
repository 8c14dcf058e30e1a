#pragma once
// Deterministic chunking of a buffer. The split depends only on the element count, never on
// the thread count, so a reduction computed per chunk and combined in chunk order gives
// bit-identical results for any number of threads.
//
//   const std::size_t chunks = chunk_count(n);
//   parallel_for(chunks, [&](std::size_t c) {
//     const ChunkRange r = chunk_range(c, n);   // [r.begin, r.end), r.begin a multiple of 16
//     partial[c] = sum(x + r.begin, r.size());
//   });
//   for (c in order) total += partial[c];
#include <cstddef>

namespace apexnpu::rt {

// Elements per chunk: 64 Ki (256 KiB of fp32), a multiple of 16 so every chunk but the last
// starts and ends on a 64-byte boundary of a 64-byte-aligned fp32 buffer.
inline constexpr std::size_t kChunkElements = std::size_t{64} * 1024;
inline constexpr std::size_t kChunkAlignment = 16;
static_assert(kChunkElements % kChunkAlignment == 0);

struct ChunkRange {
  std::size_t begin;
  std::size_t end;
  std::size_t size() const noexcept { return end - begin; }
};

constexpr std::size_t chunk_count(std::size_t n) noexcept {
  return (n + kChunkElements - 1) / kChunkElements;
}

constexpr ChunkRange chunk_range(std::size_t chunk, std::size_t n) noexcept {
  const std::size_t begin = chunk * kChunkElements;
  const std::size_t end = begin + kChunkElements < n ? begin + kChunkElements : n;
  return {begin, end};
}

}  // namespace apexnpu::rt
