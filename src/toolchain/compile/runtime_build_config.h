#pragma once
// src/runtime/build.json: how the bundled runtime is compiled. CMake reads the same file
// (src/runtime/CMakeLists.txt), so `apexnpu build` and the CMake build compile it alike.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::compile {

struct IsaLevel {
  std::string name;  // "scalar", "avx2", "avx512"
  int level = 0;     // -DAPEXNPU_ISA_LEVEL=<level>
  std::vector<std::string> flags;
};

struct BindingModule {
  std::string name;                  // "apex._apexnpu", "change_data_ptr"
  std::vector<std::string> sources;  // relative to the runtime directory
  bool links_runtime = true;         // whether the runtime objects are linked in
};

// How many unity batches (compile/unity_batches.h) each group of sources is compiled in;
// 0: every source alone.
struct UnityBatches {
  std::size_t core = 0;     // the core sources
  std::size_t kernels = 0;  // the kernel sources, at each ISA level
  std::size_t binding = 0;  // each binding module's sources
};

struct RuntimeBuildConfig {
  std::string runtime_version;
  std::string architecture;  // the one isa_levels are for: "x86_64", "aarch64"
  std::string std = "c++20";
  std::vector<std::string> compile_flags;  // for every runtime source, binding included
  std::vector<std::string> include_dirs;   // relative to the runtime directory
  std::string kernel_suffix = ".kernels.cpp";
  std::vector<std::string> excluded_dirs;  // top-level folders that are not runtime sources
  std::vector<IsaLevel> isa_levels;        // build.json's list for `architecture`
  std::vector<BindingModule> modules;
  std::vector<std::string> module_link_flags;  // binding.link_flags: for every module's link
  // binding.stable_abi: the Py_LIMITED_API the binding is written for; when set, the binding is
  // compiled once (with the lowest target Python's headers) and serves every Python.
  std::string stable_abi;
  UnityBatches unity;
};

// build.json keys its ISA levels by these names; the usual aliases (amd64, arm64) map to them.
std::string normalize_architecture(std::string_view name);
// The architecture of this machine, normalised ("x86_64", "aarch64", ...).
std::string host_architecture();

// The configuration for compiling the runtime for `architecture` (its ISA levels); throws
// Error if build.json has none for it.
RuntimeBuildConfig parse_runtime_build_config(const std::string& json_text, const std::string& source_name,
                                              const std::string& architecture = host_architecture());
RuntimeBuildConfig load_runtime_build_config(const std::filesystem::path& runtime_dir,
                                             const std::string& architecture = host_architecture());

// The runtime's sources, relative to runtime_dir and sorted: core (*.cpp that are not kernels)
// and kernels (*<kernel_suffix>), both outside the excluded folders.
struct RuntimeSources {
  std::vector<std::string> core;
  std::vector<std::string> kernels;
};
RuntimeSources list_runtime_sources(const std::filesystem::path& runtime_dir,
                                    const RuntimeBuildConfig& config);

}  // namespace apexnpu::compile
