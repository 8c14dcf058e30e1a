#pragma once
// Compiles the bundled runtime and its CPython binding for one or more target Pythons of one
// architecture and links the extension modules, through the object cache. The steps follow
// build.json (see runtime_build_config.h): core sources once, kernel sources once per ISA level,
// binding sources with each Python's headers, one shared object per binding module and Python;
// every compilation of every Python shares one job pool.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "compile/compiler.h"
#include "compile/runtime_build_config.h"

namespace apexnpu::compile {

struct TargetPython {
  std::string version;                          // "3.11.7" (part of the binding objects' cache key)
  std::filesystem::path include_dir;            // holds Python.h
  std::string ext_suffix;                       // ".cpython-311-x86_64-linux-gnu.so"
  std::vector<std::string> include_flags = {};  // more, e.g. for multiarch headers
};

struct NativeBuildOptions {
  std::filesystem::path runtime_dir;
  std::filesystem::path cache_dir;
  std::filesystem::path output_dir;  // where the linked modules are written
  int jobs = 1;                      // compilations at once; 0: core::thread_count's rule for compile work
  bool native = false;               // -march=native
  bool debug = false;                // -g and no -s
};

struct BuiltModule {
  std::size_t python = 0;      // index into the Pythons built for
  std::string name;            // "apex._apexnpu"
  std::string relative_path;   // "apex/_apexnpu.cpython-311-x86_64-linux-gnu.so"
  std::filesystem::path file;  // output_dir / python index / relative_path
  bool linked = false;         // false when taken from the cache
};

struct NativeBuildResult {
  std::size_t total = 0;     // compilation units
  std::size_t compiled = 0;  // of those, compiled now (the rest came from the cache)
  std::size_t linked = 0;
  std::vector<BuiltModule> modules;        // Python-major, build.json's order within each
  std::vector<std::string> compile_flags;  // common to every unit
  std::vector<std::string> link_flags;
  std::vector<std::string> isa_levels;  // names, in build.json order
};

// What the flags are, for the manifest and the tests.
std::vector<std::string> base_compile_flags(const RuntimeBuildConfig& config, bool native, bool debug);
std::vector<std::string> base_link_flags(bool native, bool debug);

using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

// Throws Error when a compilation or link fails: the compiler's own message and the command.
NativeBuildResult build_native(const NativeBuildOptions& options, const RuntimeBuildConfig& config,
                               const Compiler& compiler, const std::vector<TargetPython>& pythons,
                               const ProgressFn& progress = {});

}  // namespace apexnpu::compile
