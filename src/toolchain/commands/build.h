#pragma once
// `apexnpu build`: target Python -> compiled runtime + binding -> apex's wheel layout (+ .whl),
// the torch_npu emulator's pure-Python wheel beside it, and the compatibility manifest in -o,
// verified after writing. The CLI (src/cli/cmd_build.cpp) only
// parses options into BuildOptions and prints the result.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "git/upstream.h"

namespace apexnpu::commands {

struct BuildOptions {
  std::string python;                          // --python: "", "3.N" or a path
  std::optional<std::filesystem::path> tree;   // --tree: an Apex tree written by gen
  git::UpstreamRequest upstream;               // without --tree: what gen reads (--upstream, --ref, --offline)
  std::filesystem::path output = "dist";       // -o
  bool wheel = false;                          // --wheel: also write the .whl
  bool emulator = true;                        // the torch_npu emulator's wheel too (--no-emulator)
  std::string version_label = "ascend";        // --version-label
  int jobs = 0;                                // -j; 0: number of cores
  bool native = false;                         // --native: -march=native
  bool debug = false;                          // --debug: keep symbols (-g, no -s)
  std::optional<std::filesystem::path> cache_dir;  // --cache-dir
  std::optional<std::int64_t> source_date_epoch;   // from the environment; see epoch_from_env
};

struct BuildCallbacks {
  std::function<void(std::size_t done, std::size_t total)> progress;  // compilations
  std::function<void(const std::string&)> warn;
  std::function<void(const std::string&)> detail;                      // -v lines
};

// SOURCE_DATE_EPOCH parsed (UsageError when it is set but not a non-negative integer).
std::optional<std::int64_t> epoch_from_env();

// Without options.tree, runs gen (generate_tree, in memory) on options.upstream first.
// Throws Error / UsageError; on any failure nothing is left in options.output.
// Returns the --json result: python, tag, compiled/cached/total/linked, layout, wheel, manifest,
// emulator ({name, layout, wheel}, or null with --no-emulator).
nlohmann::json run_build(const BuildOptions& options, const BuildCallbacks& callbacks = {});

}  // namespace apexnpu::commands
