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
// 3: "source" describes the tree as gen recorded it (manifest/tree_marker.h): the patch and
// overlay digests are the ones the tree was made from (null for a tree gen did not make, "tree"
// then "--allow-foreign-tree"), and "tree_modified" says whether its files changed since.
inline constexpr int kManifestSchemaVersion = 3;

// The torch_npu emulator's wheel of the same architecture, built beside apex's (one for every
// interpreter: its runtime module is written for CPython 3.7's stable ABI).
struct EmulatorWheel {
  std::string name;           // "torch_npu_emulator"
  std::string file;           // the .whl file name (also when --wheel was not given)
  std::string source_digest;  // files_digest of the torch_npu package it was made from
};

struct BuildManifest {
  std::string apexnpu_version;
  std::string wheel_name;     // "apex"
  std::string wheel_version;  // "0.1+ascend"
  std::string wheel_file;     // the .whl file name (also when --wheel was not given)
  // Where the tree came from, as gen recorded it in the tree; unknown for a foreign tree.
  std::optional<std::string> upstream_url, upstream_commit;
  std::optional<std::string> patch_sha256;    // of the patch the tree was made with
  std::optional<std::string> overlay_digest;  // files_digest of its overlay (none: --no-overlay)
  std::string tree_source;                    // "gen" (build ran it), "--tree", "--allow-foreign-tree"
  std::optional<bool> tree_modified;          // its files changed since gen wrote them
  // Python
  std::string python_version, python_implementation, python_tag, abi_tag, platform_tag, ext_suffix;
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
  std::int64_t build_time = 0;       // SOURCE_DATE_EPOCH when set, else the build's start
  bool build_time_from_source_date_epoch = false;
  std::optional<EmulatorWheel> emulator;  // none with --no-emulator
  nlohmann::json compat_matrix;           // templates/compat_matrix.json as read
  nlohmann::json tested_with;
};

nlohmann::json to_json(const BuildManifest& m);

// sha256 over files given as (relative path -> bytes): for each (sorted) path,
// "path\0size\0bytes".
std::string files_digest(const std::map<std::string, std::string>& files);

}  // namespace apexnpu::manifest
