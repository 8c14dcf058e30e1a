#pragma once
// The version-compatibility matrix, kept as data in templates/compat_matrix.json with its sources
// named in it: every torch_npu release of Ascend's published table (its branch, PyTorch and
// CANN versions) and of PyPI beyond it, the Pythons Ascend lists per PyTorch version, and the
// table of the Ascend Apex-patch manual (AscendPyTorch releases with their PyTorch and Apex
// branches). A field the source does not give is absent, never guessed.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "manifest/versions.h"

namespace apexnpu::manifest {

// Schema 1 had only the Apex manual's rows; 2 adds releases, python_by_torch and sources.
inline constexpr int kCompatMatrixSchema = 2;

// One torch_npu release: a row of Ascend's table, or a PyPI release newer than the table.
struct TorchNpuRelease {
  std::string torch_npu;                         // "2.1.0.post17"
  std::string torch;                             // "2.1.0"
  std::optional<std::string> branch;             // "v2.1.0-7.2.0"
  std::optional<std::string> cann;               // "8.3.RC1"
  std::optional<std::string> torch_requirement;  // "torch==2.14.0.*" (PyPI's Requires-Dist)
  std::vector<std::string> python;               // the release's own Pythons (PyPI), else empty
  bool beta = false;
  bool historical = false;  // in the historical (incl. EOL) part of Ascend's table
  std::optional<std::string> note;
  std::string source;  // a key of CompatMatrix::sources
};

// The Pythons Ascend lists for one PyTorch version.
struct PythonSupport {
  std::string torch;
  std::vector<std::string> python;  // "3.10", ...
  std::optional<std::string> note;
  std::string source;
};

// The Apex-patch manual's table.
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
  std::map<std::string, std::string> sources;  // key -> where the facts were read
  std::vector<TorchNpuRelease> releases;       // newest first, as published
  std::vector<PythonSupport> python_by_torch;
  std::vector<CompatRow> rows;  // the Apex manual's
  nlohmann::json tested_with;   // what this project's builds are tested with
  nlohmann::json raw;           // the file as read, for the manifest
};

// Reads schema 1 and 2 (a wheel's manifest may carry either); throws Error naming `source_name`.
CompatMatrix parse_compat_matrix(const std::string& json_text, const std::string& source_name);
CompatMatrix compat_matrix_from_json(const nlohmann::json& doc, const std::string& source_name);
CompatMatrix load_compat_matrix(const std::filesystem::path& templates_dir);

struct TorchMatch {
  const CompatRow* row = nullptr;
  TorchVersion torch;                         // the listed version that matched
  bool exact = false;                         // listed exactly; otherwise a pre-/post-release of it
  std::vector<std::string> pytorch_branches;  // the row's branches for that torch line
  std::vector<std::string> apex_branches;
};

// The Apex manual's rows listing `torch` exactly, then rows listing a pre-/post-release of it
// (or, for "1.11", of any 1.11.x). Empty when none does.
std::vector<TorchMatch> match_torch(const CompatMatrix& matrix, const std::string& torch);

// The Apex manual's rows that name `branch` among their PyTorch branches.
std::vector<const CompatRow*> rows_with_branch(const CompatMatrix& matrix, const std::string& branch);

}  // namespace apexnpu::manifest
