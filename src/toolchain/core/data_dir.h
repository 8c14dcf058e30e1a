#pragma once
// Where the bundled data lives: patches/, templates/ and the runtime sources.
#include <filesystem>
#include <string>
#include <string_view>

namespace apexnpu {

// In order: $APEXNPU_DATA_DIR; <prefix>/share/apexnpu beside the installed binary; the source
// tree the binary was built from. Throws when none has a patches/ folder.
std::filesystem::path data_dir();
std::filesystem::path bundled_patch_file();     // patches/npu.patch
std::filesystem::path bundled_overlay_dir();    // patches/overlay
std::filesystem::path bundled_upstream_file();  // patches/UPSTREAM
std::filesystem::path templates_dir();          // templates
std::filesystem::path runtime_source_dir();     // runtime/ when installed, src/runtime/ in source
// The folder holding the torch_npu emulator package (torch_npu/): the data dir when installed,
// src/ in source.
std::filesystem::path emulator_package_root();

// The upstream the bundled patch is made against, as patches/UPSTREAM states it: "url URL" and
// "commit SHA" lines (# comments and blank lines allowed). Throws Error naming `source` and the
// line.
struct UpstreamPin {
  std::string url;
  std::string commit;
};
UpstreamPin parse_upstream_pin(std::string_view text, const std::string& source);

}  // namespace apexnpu
