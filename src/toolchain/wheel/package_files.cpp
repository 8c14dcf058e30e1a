#include "wheel/package_files.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "core/error.h"

namespace apexnpu::wheel {
namespace stdfs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 10> kExcludedDirs = {"tests", "test", "csrc", "__pycache__", "build",
                                                            "dist",  ".git", ".hg",  ".svn",        ".tox"};
constexpr std::array<std::string_view, 21> kExcludedSuffixes = {
    ".pyc", ".pyo", ".so", ".o",   ".a",    ".dylib", ".pyd", ".c",   ".cc",       ".cpp",     ".cxx",
    ".cu",  ".cuh", ".h",  ".hpp", ".orig", ".rej",   "~",    ".swp", ".egg-info", ".DS_Store"};

}  // namespace

bool is_package_file(const std::string& rel, const std::string& package) {
  if (!rel.starts_with(package + "/")) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = rel.find('/', start);
    const std::string_view part =
        std::string_view(rel).substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (slash == std::string::npos) {
      for (auto s : kExcludedSuffixes)
        if (part.ends_with(s)) return false;
      return true;
    }
    if (std::find(kExcludedDirs.begin(), kExcludedDirs.end(), part) != kExcludedDirs.end() ||
        part.ends_with(".egg-info"))
      return false;
    start = slash + 1;
  }
}

PackageSelection select_package_files(const stdfs::path& tree, const std::string& package) {
  std::error_code ec;
  const bool apex = package == "apex";  // the user's --tree; the emulator's source is bundled
  if (!stdfs::is_directory(tree, ec))
    throw Error(fmt::format("{}{}: not a directory", apex ? "--tree " : "", tree.string()),
                apex ? "pass the directory written by `apexnpu gen -o DIR`"
                     : "reinstall apexnpu, or set APEXNPU_DATA_DIR to its source tree");
  if (!stdfs::is_regular_file(tree / package / "__init__.py", ec))
    throw Error(fmt::format("{}{}: no {}/ package in it ({}/__init__.py is missing)", apex ? "--tree " : "",
                            tree.string(), package, package),
                apex ? "pass the directory written by `apexnpu gen -o DIR` (the folder that "
                       "contains apex/)"
                     : "reinstall apexnpu, or set APEXNPU_DATA_DIR to its source tree");
  PackageSelection sel;
  for (stdfs::recursive_directory_iterator it(tree / package, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(tree).generic_string();
    if (it->is_symlink()) {
      if (is_package_file(rel, package)) sel.skipped_symlinks.push_back(rel);
      continue;
    }
    if (it->is_directory()) {
      if (!is_package_file(rel + "/x", package)) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_package_file(rel, package)) sel.files.push_back(rel);
  }
  if (ec) throw Error(fmt::format("cannot read {}: {}", (tree / package).string(), ec.message()));
  std::sort(sel.files.begin(), sel.files.end());
  return sel;
}

PackageSelection select_package_files(const FileTree& tree, const std::string& source) {
  if (!tree.contains("apex/__init__.py"))
    throw Error(fmt::format("{}: no apex/ package in it (apex/__init__.py is missing)", source),
                "the upstream ref may not be an Apex tree (see --upstream and --ref)");
  PackageSelection sel;
  for (const auto& [path, entry] : tree) {
    if (!is_package_file(path)) continue;
    if (entry.kind == FileKind::symlink)
      sel.skipped_symlinks.push_back(path);
    else
      sel.files.push_back(path);
  }
  return sel;  // std::map order is already sorted
}

}  // namespace apexnpu::wheel
