#include "core/data_dir.h"

#include <fmt/core.h>

#include <cstdlib>
#include <system_error>

#include "core/error.h"

namespace apexnpu {
namespace fs = std::filesystem;

namespace {

bool has_patches(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "patches", ec);
}

fs::path installed_data_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path().parent_path() / APEXNPU_INSTALL_DATA_SUBDIR;
}

}  // namespace

fs::path data_dir() {
  if (const char* env = std::getenv("APEXNPU_DATA_DIR"); env != nullptr && *env != '\0') {
    if (!has_patches(env))
      throw Error(fmt::format("APEXNPU_DATA_DIR={} has no patches/ folder", env),
                  "point APEXNPU_DATA_DIR at an apexnpu source tree or share/apexnpu, or unset it");
    return fs::path(env);
  }
  if (fs::path installed = installed_data_dir(); !installed.empty() && has_patches(installed))
    return installed;
  if (has_patches(APEXNPU_SOURCE_DATA_DIR)) return fs::path(APEXNPU_SOURCE_DATA_DIR);
  throw Error("cannot find apexnpu's data (patches/, templates/, runtime sources)",
              "reinstall apexnpu with `cmake --install`, or set APEXNPU_DATA_DIR");
}

fs::path bundled_patch_file() { return data_dir() / "patches" / "npu.patch"; }
fs::path bundled_overlay_dir() { return data_dir() / "patches" / "overlay"; }
fs::path templates_dir() { return data_dir() / "templates"; }

fs::path runtime_source_dir() {
  const fs::path base = data_dir();
  std::error_code ec;
  if (fs::is_directory(base / "runtime", ec)) return base / "runtime";
  return base / "src" / "runtime";
}

fs::path emulator_package_root() {
  const fs::path base = data_dir();
  std::error_code ec;
  if (fs::is_directory(base / "torch_npu", ec)) return base;
  return base / "src";
}

}  // namespace apexnpu
