#include "wheel/startup_files.h"

#include <string>

#include "fs/file_io.h"

namespace apexnpu::wheel {
namespace stdfs = std::filesystem;

void add_startup_files(const FileTree& tree, WheelFiles& files) {
  for (const auto name : kStartupFiles) {
    const auto it = tree.find(std::string(name));
    if (it != tree.end() && it->second.kind != FileKind::symlink) files[it->first] = it->second.content;
  }
}

void add_startup_files(const stdfs::path& tree, WheelFiles& files) {
  for (const auto name : kStartupFiles) {
    const stdfs::path path = tree / name;
    std::error_code ec;
    if (stdfs::is_symlink(path, ec) || !stdfs::is_regular_file(path, ec)) continue;
    files[std::string(name)] = read_file(path);
  }
}

bool has_startup_module(const WheelFiles& files) {
  return files.contains(std::string(kStartupModule) + ".py");
}

}  // namespace apexnpu::wheel
