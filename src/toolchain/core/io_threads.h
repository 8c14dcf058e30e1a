#pragma once
// How many threads share file-system and inflating work (reading a tree, creating one, inflating
// blobs, diffing files): a few, because such work is mostly system calls and memory traffic,
// which stop scaling well before a large machine's core count.
#include <algorithm>
#include <cstddef>
#include <thread>

namespace apexnpu {

inline std::size_t io_threads() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 4);
}

}  // namespace apexnpu
