#pragma once
// Splitting bytes into lines that keep their terminators ("\n", and a "\r" before it), so that
// joining them gives the bytes back exactly.
#include <string_view>
#include <vector>

namespace apexnpu::patch {

std::vector<std::string_view> split_lines(std::string_view bytes);

inline bool ends_with_newline(std::string_view line) { return !line.empty() && line.back() == '\n'; }

// The line without "\n" or "\r\n".
inline std::string_view without_terminator(std::string_view line) {
  if (ends_with_newline(line)) line.remove_suffix(1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace apexnpu::patch
