#pragma once
// The optimizers a built runtime carries, as the runtime itself describes them: JSON text in the
// section ".apexnpu_registry" of the module that links it (src/runtime/optim/
// registry_description.h writes it from the runtime's registry). Read from the binary, not the
// sources, so the manifest lists what was compiled, for any target architecture.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::compile {

inline constexpr std::string_view kRuntimeRegistrySection = ".apexnpu_registry";

struct RuntimeOptimizer {
  std::string kind;          // Optimizer(kind) in the binding
  std::string python_class;  // the apex.optimizers class that runs it
  std::vector<std::string> options;
  std::vector<std::string> state;
};

// The description in `module`, or none when the module has no such section. Throws Error naming
// the module when it is not ELF or the description is malformed.
std::optional<std::vector<RuntimeOptimizer>> read_runtime_registry(const std::filesystem::path& module);

// The same from the section's text; `source` names it in errors.
std::vector<RuntimeOptimizer> parse_runtime_registry(std::string_view text, const std::string& source);

}  // namespace apexnpu::compile
