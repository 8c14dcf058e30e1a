#pragma once
// The blocks exec/vec16.h's kernels walk: whole blocks of 16 lanes, then one tail.
#include <cstddef>

#include "exec/isa.h"

namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd {

struct Full {
  static constexpr unsigned count = 16;
};
struct Tail {
  unsigned count;  // 1 .. 15 live lanes; the others load as 0 and are never stored
};

// Runs body(i, Full{}) for each whole block of 16 in [begin, end), then body(i, Tail{n}).
template <typename Body>
inline void for_blocks(std::size_t begin, std::size_t end, Body&& body) {
  std::size_t i = begin;
  for (; i + 16 <= end; i += 16) body(i, Full{});
  if (i < end) body(i, Tail{static_cast<unsigned>(end - i)});
}

}  // namespace apexnpu::rt::APEXNPU_ISA_NS::optim_simd
