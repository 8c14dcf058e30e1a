#pragma once
// `apexnpu build`: for each target architecture and each of its Pythons, the compiled runtime
// and binding -> apex's wheel layout (+ .whl) tagged manylinux from its own binaries, and its
// compatibility manifest; the torch_npu emulator's wheel (one per architecture, carrying the
// same binding) beside them; all in -o, verified, or nothing. The runtime is compiled once per
// architecture, the binding once per Python. The CLI (src/cli/cmd_build.cpp) only parses options
// into BuildOptions and prints the result.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "git/upstream.h"

namespace apexnpu::commands {

struct BuildOptions {
  std::string python;                                 // --python: "", "all", or 3.N / paths, comma-separated
  std::string target;                                 // --target: "", or x86_64 / aarch64, comma-separated
  std::optional<std::filesystem::path> tree;          // --tree: an Apex tree written by gen
  bool allow_foreign_tree = false;                    // --allow-foreign-tree: a --tree gen did not make
  git::UpstreamRequest upstream;                      // without --tree: what gen reads (--upstream,
                                                      // --ref, --offline, --clone-cache)
  std::filesystem::path output = "dist";              // -o
  bool wheel = false;                                 // --wheel: also write the .whl
  bool emulator = true;                               // the torch_npu emulator's wheel too (--no-emulator)
  std::string version_label = "ascend";               // --version-label
  int jobs = 0;                                       // -j; 0: number of cores
  bool native = false;                                // --native: -march=native
  bool debug = false;                                 // --debug: keep symbols (-g, no -s)
  std::optional<std::filesystem::path> object_cache;  // --object-cache
  std::optional<std::int64_t> source_date_epoch;      // from the environment; see epoch_from_env
};

struct BuildCallbacks {
  std::function<void(std::size_t done, std::size_t total)> progress;  // compilations
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> detail;  // -v lines
};

// SOURCE_DATE_EPOCH parsed (UsageError when it is set but not a non-negative integer).
std::optional<std::int64_t> epoch_from_env();

// The interpreter the apex wheel was built for.
struct BuiltPython {
  std::filesystem::path executable;
  std::string version;         // "3.11.7"
  std::string implementation;  // "CPython"
  std::string soabi;
  std::string ext_suffix;  // ".cpython-311-x86_64-linux-gnu.so"
  std::filesystem::path include_dir;
  std::string platform;
};

// The torch_npu emulator's wheel, written beside apex's.
struct BuiltEmulator {
  std::string name;  // "torch_npu_emulator"
  std::filesystem::path layout;
  std::optional<std::filesystem::path> wheel;  // with --wheel
};

// One apex wheel: one architecture and one Python.
struct BuiltWheel {
  std::string architecture;
  BuiltPython python;
  std::string tag;                         // "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64"
  std::vector<std::string> platform_tags;  // the platform part, one tag each
  std::size_t files = 0;
  std::filesystem::path layout;
  std::filesystem::path manifest;
  std::optional<std::filesystem::path> wheel;  // with --wheel
  std::optional<std::string> wheel_sha256;     // of the .whl
  std::string record_sha256;                   // of its RECORD (which hashes every file)
  std::string manifest_sha256;
  nlohmann::json to_json() const;
};

struct BuildResult {
  // The first wheel's, as before several could be built at once.
  BuiltPython python;
  std::string tag;           // "cp311-cp311-linux_x86_64"
  std::string version;       // "0.1+ascend"
  std::size_t compiled = 0;  // compilation units compiled now
  std::size_t cached = 0;    // taken from the object cache
  std::size_t total = 0;
  std::size_t linked = 0;  // modules linked now (the others came from the cache)
  std::filesystem::path object_cache;
  std::size_t files = 0;  // in apex's wheel
  std::filesystem::path layout;
  std::filesystem::path manifest;
  std::optional<std::filesystem::path> wheel;  // with --wheel
  std::optional<BuiltEmulator> emulator;       // the first target's; none with --no-emulator
  std::vector<BuiltEmulator> emulators;        // one per target architecture
  std::vector<BuiltWheel> wheels;              // every apex wheel, target-major
  // The --json document (the object cache is its "cache_dir"; "verified" is always true, as a
  // wheel that does not verify fails the build).
  nlohmann::json to_json() const;
};

// Without options.tree, runs gen (generate_tree, in memory) on options.upstream first.
// Throws Error / UsageError; on any failure nothing is left in options.output.
BuildResult run_build(const BuildOptions& options, const BuildCallbacks& callbacks = {});

}  // namespace apexnpu::commands
