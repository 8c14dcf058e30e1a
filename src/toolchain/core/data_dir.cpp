#include "core/data_dir.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "core/error.h"

namespace apexnpu {
namespace stdfs = std::filesystem;

namespace {

bool has_patches(const stdfs::path& dir) {
  std::error_code ec;
  return stdfs::is_directory(dir / "patches", ec);
}

stdfs::path installed_data_dir() {
  std::error_code ec;
  const stdfs::path exe = stdfs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().parent_path() / APEXNPU_INSTALL_DATA_SUBDIR;
}

}  // namespace

stdfs::path data_dir() {
  if (const char* env = std::getenv("APEXNPU_DATA_DIR"); env != nullptr && *env != '\0') {
    if (!has_patches(env))
      throw Error(fmt::format("APEXNPU_DATA_DIR={} has no patches/ folder", env),
                  "point APEXNPU_DATA_DIR at an apexnpu source tree or share/apexnpu, or unset it");
    return stdfs::path(env);
  }
  if (stdfs::path installed = installed_data_dir(); !installed.empty() && has_patches(installed))
    return installed;
  if (has_patches(APEXNPU_SOURCE_DATA_DIR)) return stdfs::path(APEXNPU_SOURCE_DATA_DIR);
  throw Error("cannot find apexnpu's data (patches/, templates/, runtime sources)",
              "reinstall apexnpu with `cmake --install`, or set APEXNPU_DATA_DIR");
}

stdfs::path bundled_patch_file() { return data_dir() / "patches" / "npu.patch"; }
stdfs::path bundled_overlay_dir() { return data_dir() / "patches" / "overlay"; }
stdfs::path bundled_upstream_file() { return data_dir() / "patches" / "UPSTREAM"; }
stdfs::path templates_dir() { return data_dir() / "templates"; }

stdfs::path runtime_source_dir() {
  const stdfs::path base = data_dir();
  std::error_code ec;
  if (stdfs::is_directory(base / "runtime", ec)) return base / "runtime";
  return base / "src" / "runtime";
}

stdfs::path emulator_package_root() {
  const stdfs::path base = data_dir();
  std::error_code ec;
  if (stdfs::is_directory(base / "torch_npu", ec)) return base;
  return base / "src";
}

}  // namespace apexnpu

namespace apexnpu {

UpstreamPin parse_upstream_pin(std::string_view text, const std::string& source) {
  UpstreamPin pin;
  int line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const std::size_t space = line.find(' ');
    const std::string_view key = line.substr(0, space);
    const std::string_view value = space == std::string_view::npos ? "" : line.substr(space + 1);
    std::string* field = key == "url" ? &pin.url : key == "commit" ? &pin.commit : nullptr;
    if (field == nullptr || value.empty() || value.find(' ') != std::string_view::npos)
      throw Error(fmt::format("{}:{}: expected \"url URL\" or \"commit SHA\", got \"{}\"", source,
                              line_number, line));
    *field = std::string(value);
  }
  if (pin.url.empty() || pin.commit.empty())
    throw Error(fmt::format("{}: needs both a url and a commit line", source));
  return pin;
}

}  // namespace apexnpu
