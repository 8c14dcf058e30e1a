#pragma once
// A minimal line diff (Myers' O(ND) algorithm) between two sequences of lines.
#include <string_view>
#include <vector>

namespace apexnpu::patch {

enum class EditKind { keep, remove, insert };

struct Edit {
  EditKind kind;
  // The line in `a` (keep, remove) or in `b` (keep, insert); for the other side, the number
  // of its lines before this edit. Either way: how many lines of that side precede the edit.
  std::size_t old_index;
  std::size_t new_index;
};

// The shortest edit script turning `a` into `b`, in order.
std::vector<Edit> diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b);

}  // namespace apexnpu::patch
