#pragma once
// Which files of a tree go into a wheel: one package's Python files and package data (`apex`
// from a patched Apex tree, `torch_npu` from the emulator's source). Not: tests, C++/CUDA
// sources (csrc and loose sources/headers), byte code, compiled leftovers, build and egg-info
// folders, VCS folders, editor backups, patch rejects.
#include <filesystem>
#include <string>
#include <vector>

#include "core/file_tree.h"

namespace apexnpu::wheel {

struct PackageSelection {
  std::vector<std::string> files;  // relative to the tree, '/'-separated, sorted
  std::vector<std::string> skipped_symlinks;
};

// Whether one path (relative to the tree, under <package>/) belongs in the wheel.
bool is_package_file(const std::string& relative_path, const std::string& package = "apex");

// Throws Error when the tree has no such package (no <package>/__init__.py).
PackageSelection select_package_files(const std::filesystem::path& tree, const std::string& package = "apex");
// The apex selection from a tree in memory (what gen produces); `source` names it in errors.
PackageSelection select_package_files(const FileTree& tree, const std::string& source);

}  // namespace apexnpu::wheel
