#pragma once
// Turns the wheel's files into a layout directory and a .whl: adds the dist-info (METADATA,
// WHEEL, top_level.txt, extra files, RECORD last), writes them with fixed permissions, and zips
// them deterministically.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "wheel/record.h"

namespace apexnpu::wheel {

struct WheelIdentity {
  std::string name = "apex";
  std::string version;          // "0.1+ascend"
  std::string tag;              // "cp311-cp311-linux_x86_64", or a compressed tag set
  std::string platform;         // sysconfig platform, for METADATA's Platform ("any" when pure)
  std::string apexnpu_version;  // for WHEEL's Generator
  std::vector<std::string> top_level;
  std::string metadata_template = "METADATA";  // templates/wheel/<this>.in
  bool purelib = false;                        // no compiled code: WHEEL's Root-Is-Purelib
};

// Adds the dist-info files to `files` (extra_files are named relative to the dist-info) and
// returns the dist-info directory name.
std::string add_dist_info(WheelFiles& files, const WheelIdentity& id,
                          const std::filesystem::path& templates_dir,
                          const std::map<std::string, std::string>& extra_files);

// 0755 for shared objects (the loader wants them executable), 0644 for everything else.
std::uint32_t wheel_file_mode(const std::string& path);

// Writes every file under `dir` (which must not exist yet).
void write_layout(const WheelFiles& files, const std::filesystem::path& dir);

// The .whl bytes: entries sorted, the dist-info last (RECORD at its very end), fixed modes,
// every timestamp `unix_time` (clamped to 1980-01-01).
std::string build_wheel_zip(const WheelFiles& files, const std::string& dist_info, std::int64_t unix_time);

}  // namespace apexnpu::wheel
