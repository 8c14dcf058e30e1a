#pragma once
// The version-compatibility matrix of the Ascend Apex-patch manual, kept as data in
// templates/compat_matrix.json: which AscendPyTorch release goes with which PyTorch and which
// PyTorch / Apex branches.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace apexnpu::manifest {

struct TorchVersion {
  std::string version;  // "1.11.0.rc1"
  bool beta = false;
};

struct CompatRow {
  std::string ascend_pytorch;
  std::vector<TorchVersion> pytorch;
  std::vector<std::string> pytorch_branches;
  std::vector<std::string> apex_branches;
};

struct CompatMatrix {
  int schema_version = 0;
  std::vector<CompatRow> rows;
  nlohmann::json tested_with;  // what this project's builds are tested with
  nlohmann::json raw;          // the file as read, for the manifest
};

CompatMatrix parse_compat_matrix(const std::string& json_text, const std::string& source_name);
CompatMatrix load_compat_matrix(const std::filesystem::path& templates_dir);

// "1.11.0.rc2" -> "1.11.0"; "1.5.0.post3" -> "1.5.0"; "1.8.1" -> "1.8.1".
std::string release_of(const std::string& torch_version);

struct TorchMatch {
  const CompatRow* row = nullptr;
  TorchVersion torch;                         // the listed version that matched
  bool exact = false;                         // listed exactly; otherwise a pre-/post-release of it
  std::vector<std::string> pytorch_branches;  // the row's branches for that torch line
  std::vector<std::string> apex_branches;
};

// Rows listing `torch` exactly, then rows listing a pre-/post-release of it (or, for "1.11",
// of any 1.11.x). Empty when none does.
std::vector<TorchMatch> match_torch(const CompatMatrix& matrix, const std::string& torch);

// The matrix as an aligned text table (one line per row, comma-separated lists).
std::string format_table(const CompatMatrix& matrix);

}  // namespace apexnpu::manifest
