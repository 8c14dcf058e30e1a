#pragma once
// Which files of a patched Apex tree go into the wheel: the `apex` package's Python files and
// package data. Not: tests, C++/CUDA sources (csrc and loose sources/headers), byte code,
// compiled leftovers, build and egg-info folders, VCS folders, editor backups, patch rejects.
#include <filesystem>
#include <string>
#include <vector>

#include "core/file_tree.h"

namespace apexnpu::wheel {

struct PackageSelection {
  std::vector<std::string> files;    // relative to the tree, '/'-separated, sorted
  std::vector<std::string> skipped_symlinks;
};

// Whether one path (relative to the tree, under apex/) belongs in the wheel.
bool is_package_file(const std::string& relative_path);

// Throws Error when the tree has no apex/ package (no apex/__init__.py).
PackageSelection select_package_files(const std::filesystem::path& tree);
// The same selection from a tree in memory (what gen produces); `source` names it in errors.
PackageSelection select_package_files(const FileTree& tree, const std::string& source);

}  // namespace apexnpu::wheel
