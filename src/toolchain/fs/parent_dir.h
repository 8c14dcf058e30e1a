#pragma once
// The directory that holds a path: its parent, or "." for a bare name (where a rename, a lock
// or an fsync of that directory must happen).
#include <filesystem>

namespace apexnpu::fs {

inline std::filesystem::path parent_of(const std::filesystem::path& path) {
  return path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
}

}  // namespace apexnpu::fs
