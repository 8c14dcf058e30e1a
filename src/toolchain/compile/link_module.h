#pragma once
// Linking one binding module (build.json's binding.modules) from compiled objects, through the
// object cache: a module whose link command and objects are unchanged is copied, not relinked.
#include <filesystem>
#include <string>
#include <vector>

#include "compile/compile_unit.h"
#include "compile/native_build.h"

namespace apexnpu::compile {

// What every link of one build shares.
struct ModuleLinker {
  const Compiler& compiler;
  const std::vector<std::string>& link_flags;
  ObjectCache& cache;
  std::filesystem::path output_dir;  // where the modules are written
  std::string ext_suffix;            // the target Python's extension suffix
};

// "apex._apexnpu" -> "apex/_apexnpu<ext_suffix>".
std::string module_relative_path(const std::string& module, const std::string& ext_suffix);

// Links `module` from `objects` (in link order) and writes it to output_dir. Throws Error when
// the link fails (the linker's message and the command) or the module cannot be written.
BuiltModule link_module(const ModuleLinker& linker, const BindingModule& module,
                        const std::vector<CompiledUnit>& objects);

}  // namespace apexnpu::compile
