#pragma once
// A built wheel's manifest read back (the <wheel>.manifest.json build writes beside it): what
// the wheel was made for (Python, tags, architecture), from what, what it was tested with, and
// the compatibility matrix it carries. The reverse of build_manifest.h's to_json, for
// `apexnpu manifest <file>`.
#include <filesystem>
#include <optional>
#include <string>

#include "manifest/compat_matrix.h"

namespace apexnpu::manifest {

struct WheelManifest {
  int schema_version = 0;
  std::string apexnpu_version;
  std::string wheel_name, wheel_version, wheel_file;
  std::string python_version;  // "3.11.7"
  std::string python_tag, abi_tag, platform_tag;
  std::string architecture;  // of its compiled modules
  std::optional<std::string> upstream_url, upstream_commit;
  std::optional<std::string> emulator_file;  // the torch_npu emulator wheel built beside it
  nlohmann::json tested_with;                // as the build recorded it
  CompatMatrix matrix;                       // the one the build carried
};

// "3.11.7" -> "3.11".
std::string python_line(const std::string& python_version);

// Throws Error naming the file: absent, not JSON, or not a build manifest (fields missing).
WheelManifest read_wheel_manifest(const std::filesystem::path& file);

}  // namespace apexnpu::manifest
