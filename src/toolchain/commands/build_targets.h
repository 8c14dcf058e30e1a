#pragma once
// What a build is for, resolved before any work: each target architecture with its compiler and
// runtime configuration, and for each the Pythons to build wheels for (--python=3.N,... or
// all). The host's Pythons are run once to learn what they are; another architecture's come from
// Debian's multiarch headers.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/compiler.h"
#include "compile/runtime_build_config.h"
#include "python/interpreter.h"

namespace apexnpu::commands {

struct TargetPython {
  std::filesystem::path executable;  // empty for another architecture's (never run)
  python::PythonInfo info;
  std::filesystem::path include_dir;
  std::vector<std::string> include_flags;  // beyond -I include_dir
  python::WheelTag tag;                    // its platform part from sysconfig, before the
                                           // binaries decide the manylinux tag
};

struct BuildTarget {
  std::string architecture;  // "x86_64", "aarch64"
  bool cross = false;        // not this machine's architecture
  compile::Compiler compiler;
  compile::RuntimeBuildConfig config;
  std::vector<TargetPython> pythons;
};

// "3.8, 3.11" -> {"3.8", "3.11"}; empty items are a UsageError naming `option`.
std::vector<std::string> split_list(std::string_view value, const char* option);

using DetailFn = std::function<void(const std::string&)>;

// --target (empty: the host) x --python (empty: python3; "all": every supported CPython found).
// Throws UsageError / Error naming what is missing and what provides it.
std::vector<BuildTarget> resolve_targets(const std::string& targets, const std::string& pythons,
                                         const std::filesystem::path& runtime_dir, const DetailFn& warn,
                                         const DetailFn& detail);

}  // namespace apexnpu::commands
