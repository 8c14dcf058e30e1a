#include "fs/temp_path.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.h"

namespace apexnpu::fs {

TempDirBeside::TempDirBeside(const std::filesystem::path& target) {
  std::string pattern = temp_pattern_beside(target);
  if (::mkdtemp(pattern.data()) == nullptr)
    throw Error(fmt::format("cannot create a temporary directory beside {}: {}", target.string(),
                            std::strerror(errno)),
                "check that the directory exists and is writable");
  path_ = pattern;
}

std::string temp_pattern_beside(const std::filesystem::path& target) {
  const auto parent = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  return (parent / fmt::format(".{}.apexnpu-tmp-XXXXXX", target.filename().string())).string();
}

TempDirBeside::~TempDirBeside() {
  if (!path_.empty()) remove_tree_quietly(path_);
}

void remove_tree_quietly(const std::filesystem::path& path) noexcept {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);  // does not follow symlinks
}

}  // namespace apexnpu::fs
