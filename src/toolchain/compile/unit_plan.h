#pragma once
// What the runtime build compiles, decided before anything runs: the compilation units (a
// source, or a unity batch of sources) and which of them each binding module links, following
// build.json (core sources once, kernel sources once per ISA level, each module's binding
// sources with each target Python's headers), and the order the units are handed to the job
// pool in. The runtime does not see Python.h, so it is compiled once for every Python.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "compile/runtime_build_config.h"

namespace apexnpu::compile {

struct TargetPython;

// One compilation: a source, or a unity batch of sources (compile/unity_batches.h).
struct Unit {
  std::vector<std::string> sources;  // relative to the runtime dir
  std::string name;                  // the source, or "<group> batch k/n" for a batch
  std::vector<std::string> flags;    // beyond the common ones
  std::string key_extra;             // extra cache-key material
};

// One binding module for one Python, and the units of its own binding sources.
struct ModuleUnits {
  std::size_t python = 0;  // index into the Pythons planned for
  std::size_t module = 0;  // index into config.modules
  std::vector<std::size_t> units;
};

struct UnitPlan {
  std::vector<Unit> units;           // the runtime's (core, then kernels per ISA level), then the modules'
  std::size_t runtime_units = 0;     // units[0, runtime_units) are the runtime's
  std::vector<ModuleUnits> modules;  // Python-major: each Python's modules in build.json order
  // The units a module links: its own, then the runtime's when it links the runtime.
  std::vector<std::size_t> link_units(const RuntimeBuildConfig& config, const ModuleUnits& module) const;
};

// A source's size in bytes (0 when it cannot be read): what batches are balanced on and what
// a unit's compile time is estimated from.
std::uintmax_t source_weight(const std::filesystem::path& runtime_dir, const std::string& rel);

UnitPlan plan_units(const std::filesystem::path& runtime_dir, const RuntimeBuildConfig& config,
                    const std::vector<TargetPython>& pythons);

// The units' indices, longest first, so the last job to finish is a short one and the cores
// stay busy until the end.
std::vector<std::size_t> longest_first(const std::filesystem::path& runtime_dir,
                                       const std::vector<Unit>& units);

}  // namespace apexnpu::compile
