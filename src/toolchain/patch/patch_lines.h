#pragma once
// A patch split into lines, with its name, for the parser's pieces: every error they raise
// names the patch file and the line, 1-based.
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::patch {

class PatchLines {
 public:
  PatchLines(std::string_view bytes, std::string_view source_name);

  std::size_t size() const { return lines_.size(); }
  std::string_view operator[](std::size_t index) const { return lines_[index]; }
  const std::string& source() const { return source_; }

  // Throws apexnpu::Error "<patch>:<index + 1>: <what>".
  [[noreturn]] void fail(std::size_t index, const std::string& what) const;

 private:
  std::vector<std::string_view> lines_;
  std::string source_;
};

}  // namespace apexnpu::patch
