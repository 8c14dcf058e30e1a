#pragma once
// The version-compatibility manifest a build writes beside the wheel layout (and into its
// dist-info): what the wheel was made from, for which Python, with which compiler and flags,
// what runtime it carries, and the compatibility matrix. Schema-versioned JSON; it holds no
// machine paths and no wall-clock time, so it is reproducible like the wheel.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace apexnpu::manifest {

// 2: adds "emulator", the torch_npu emulator wheel built beside apex's (null without it).
inline constexpr int kManifestSchemaVersion = 2;

// The torch_npu emulator's wheel of the same architecture, built beside apex's (one for every
// interpreter: its runtime module is written for CPython 3.7's stable ABI).
struct EmulatorWheel {
  std::string name;           // "torch_npu_emulator"
  std::string file;           // the .whl file name (also when --wheel was not given)
  std::string source_digest;  // directory_digest of the torch_npu package it was made from
};

struct BuildManifest {
  std::string apexnpu_version;
  std::string wheel_name;         // "apex"
  std::string wheel_version;      // "0.1+ascend"
  std::string wheel_file;         // the .whl file name (also when --wheel was not given)
  // Where the tree came from (gen's provenance; unknown for a --tree not written by gen).
  std::optional<std::string> upstream_url, upstream_commit;
  std::string patch_sha256;       // of patches/npu.patch
  std::string overlay_digest;     // sha256 over the overlay's sorted (path, bytes)
  std::string tree_source;        // "gen" or "--tree"
  // Python
  std::string python_version, python_implementation, python_tag, abi_tag, platform_tag,
      ext_suffix;
  std::string architecture;  // of the compiled modules: "x86_64", "aarch64"
  // Compiler
  std::string compiler_command, compiler_version;
  std::vector<std::string> compile_flags, link_flags;
  // Runtime
  std::string runtime_version;
  std::vector<std::string> optimizers;                   // kinds, sorted
  std::map<std::string, std::string> optimizer_classes;  // kind -> its apex.optimizers class
  std::vector<std::string> isa_levels;
  std::vector<std::string> modules;  // paths inside the wheel
  std::int64_t build_time = 0;          // SOURCE_DATE_EPOCH when set, else the build's start
  bool build_time_from_source_date_epoch = false;
  std::optional<EmulatorWheel> emulator;  // none with --no-emulator
  nlohmann::json compat_matrix;      // templates/compat_matrix.json as read
  nlohmann::json tested_with;
};

nlohmann::json to_json(const BuildManifest& m);

// sha256 over a directory's files: for each (sorted) relative path, "path\0size\0bytes".
std::string directory_digest(const std::string& dir);
// The same digest over files given as (relative path -> bytes).
std::string files_digest(const std::map<std::string, std::string>& files);

}  // namespace apexnpu::manifest
