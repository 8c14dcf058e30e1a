#include "wheel/package_files.h"

#include <fmt/core.h>
#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "core/error.h"
#include "wheel/member_names.h"

namespace apexnpu::wheel {
namespace stdfs = std::filesystem;

namespace {

// Folders that are never packages of the wheel, wherever they are.
constexpr std::array<std::string_view, 6> kExcludedDirs = {"tests",       "test",  "csrc",
                                                           "__pycache__", "build", "dist"};
// The package data apexnpu declares (setup.py's package_data for every package): fnmatch
// patterns of file names. Modules (*.py) go in anyway.
constexpr std::array<const char*, 2> kPackageData = {"py.typed", "*.json"};

bool is_module_or_data(std::string_view name) {
  if (name.starts_with('.')) return false;  // dotfiles: .gitignore, editor swap files
  if (name.size() > 3 && name.ends_with(".py")) return true;
  const std::string n(name);
  return std::any_of(kPackageData.begin(), kPackageData.end(),
                     [&](const char* pattern) { return ::fnmatch(pattern, n.c_str(), 0) == 0; });
}

// find_packages skips a folder with '.' in its name (not an importable name).
bool may_be_package_dir(std::string_view name) {
  return !name.empty() && name.find('.') == std::string_view::npos &&
         std::find(kExcludedDirs.begin(), kExcludedDirs.end(), name) == kExcludedDirs.end();
}

// Whether every folder of rel (a path under a package) holds an __init__.py: `packages` is the
// set of such folders.
bool within_packages(const std::string& rel, const std::set<std::string>& packages) {
  for (std::size_t slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1))
    if (!packages.contains(rel.substr(0, slash))) return false;
  return true;
}

}  // namespace

bool is_package_file(const std::string& rel, const std::string& package) {
  if (!rel.starts_with(package + "/")) return false;
  std::size_t start = package.size() + 1;
  while (true) {
    const std::size_t slash = rel.find('/', start);
    const std::string_view part =
        std::string_view(rel).substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) return is_module_or_data(part);
    if (!may_be_package_dir(part)) return false;
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
  // Walks packages only: a folder is entered when it holds an __init__.py (find_packages).
  for (stdfs::recursive_directory_iterator it(tree / package, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string rel = it->path().lexically_relative(tree).generic_string();
    if (it->is_symlink()) {
      if (is_package_file(rel, package)) sel.skipped_symlinks.push_back(rel);
      continue;
    }
    if (it->is_directory()) {
      std::error_code init_ec;
      if (!is_package_file(rel + "/__init__.py", package) ||
          !stdfs::is_regular_file(it->path() / "__init__.py", init_ec))
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_package_file(rel, package)) sel.files.push_back(rel);
  }
  if (ec) throw Error(fmt::format("cannot read {}: {}", (tree / package).string(), ec.message()));
  std::sort(sel.files.begin(), sel.files.end());
  check_member_names(sel.files, (tree / package).string());
  return sel;
}

PackageSelection select_package_files(const FileTree& tree, const std::string& source) {
  if (!tree.contains("apex/__init__.py"))
    throw Error(fmt::format("{}: no apex/ package in it (apex/__init__.py is missing)", source),
                "the upstream ref may not be an Apex tree (see --upstream and --ref)");
  std::set<std::string> packages;  // the folders holding an __init__.py
  for (const auto& [path, entry] : tree)
    if (entry.kind != FileKind::symlink && path.ends_with("/__init__.py"))
      packages.insert(path.substr(0, path.size() - std::string_view("/__init__.py").size()));
  PackageSelection sel;
  for (const auto& [path, entry] : tree) {
    if (!is_package_file(path) || !within_packages(path, packages)) continue;
    if (entry.kind == FileKind::symlink)
      sel.skipped_symlinks.push_back(path);
    else
      sel.files.push_back(path);
  }
  check_member_names(sel.files, source);
  return sel;  // std::map order is already sorted
}

}  // namespace apexnpu::wheel
