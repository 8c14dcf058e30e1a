#pragma once
// Which files of a tree go into a wheel (`apex` from a patched Apex tree, `torch_npu` from the
// emulator's source): what upstream Apex's setup.py packages. Its packages are those setuptools'
// find_packages finds: the folders under <package>/ holding an __init__.py, reached through
// packages only (a folder without one, e.g. apex/pyprof/examples, is not looked into) and with
// no '.' in their names; of each, the modules (*.py) and the declared package data. Upstream
// declares none; ours (py.typed, *.json: data a package reads) is not in upstream Apex either.
// So never: docs, READMEs, examples, shell scripts, images, dotfiles, C++/CUDA sources, byte
// code, build leftovers, editor backups, patch rejects. Packages named test or tests (upstream's
// CUDA tests), csrc, build and dist are left out too.
#include <filesystem>
#include <string>
#include <vector>

#include "core/file_tree.h"

namespace apexnpu::wheel {

struct PackageSelection {
  std::vector<std::string> files;  // relative to the tree, '/'-separated, sorted
  std::vector<std::string> skipped_symlinks;
};

// Whether one path (relative to the tree, under <package>/) may belong in the wheel by its name:
// a module or declared package data, in folders that may be packages. The selections below also
// need each of its folders to hold an __init__.py.
bool is_package_file(const std::string& relative_path, const std::string& package = "apex");

// Throws Error when the tree has no such package (no <package>/__init__.py).
PackageSelection select_package_files(const std::filesystem::path& tree, const std::string& package = "apex");
// The apex selection from a tree in memory (what gen produces); `source` names it in errors.
PackageSelection select_package_files(const FileTree& tree, const std::string& source);

}  // namespace apexnpu::wheel
