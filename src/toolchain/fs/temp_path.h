#pragma once
// A temporary directory beside a target, removed unless released (after it was renamed).
#include <filesystem>
#include <string>

namespace apexnpu::fs {

class TempDirBeside {
 public:
  // Creates <parent of target>/.<name of target>.apexnpu-tmp-XXXXXX.
  explicit TempDirBeside(const std::filesystem::path& target);
  ~TempDirBeside();
  TempDirBeside(const TempDirBeside&) = delete;
  TempDirBeside& operator=(const TempDirBeside&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

// <parent of target>/.<name of target>.apexnpu-tmp-XXXXXX, a pattern for mkdtemp/mkstemp.
std::string temp_pattern_beside(const std::filesystem::path& target);

// Removes a directory tree without following symlinks; errors are ignored (best effort cleanup).
void remove_tree_quietly(const std::filesystem::path& path) noexcept;

}  // namespace apexnpu::fs
