#pragma once
// Compiling one unit of the plan (compile/unit_plan.h) through the object cache: a hit starts
// no process; a miss compiles once even when concurrent builds share the cache.
#include <filesystem>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "compile/object_cache.h"
#include "compile/unit_plan.h"

namespace apexnpu::compile {

// What every compilation of one build shares.
struct UnitCompiler {
  std::filesystem::path runtime_dir;  // absolute; the compiler runs there
  const Compiler& compiler;
  std::vector<std::string> common_flags;  // before each unit's own flags
  ObjectCache& cache;
};

struct CompiledUnit {
  std::string object_key;
  std::filesystem::path object;  // in the cache
  bool compiled = false;         // false when taken from the cache
};

// The common flags for the runtime in `runtime_dir`: the base flags, then what makes objects
// independent of where the runtime is, then its include directories.
std::vector<std::string> common_compile_flags(const std::vector<std::string>& base_flags,
                                              const std::filesystem::path& runtime_dir,
                                              const RuntimeBuildConfig& config);

// Throws Error when a source is missing or the compiler fails (its message and the command).
CompiledUnit compile_unit(const UnitCompiler& setup, const Unit& unit);

}  // namespace apexnpu::compile
