#pragma once
// `apexnpu manifest`: the compatibility matrix (templates/compat_matrix.json) as a table or JSON, and which
// AscendPyTorch releases and branches go with one torch version (--torch).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace apexnpu::commands {

struct ManifestQuery {
  std::optional<std::string> torch;  // --torch VERSION
};

struct ManifestOutput {
  nlohmann::json json;  // what --json prints
  std::string text;     // what a person sees
};

// Throws Error when --torch matches no row (listing the versions the matrix knows).
ManifestOutput run_manifest(const ManifestQuery& query);

}  // namespace apexnpu::commands
