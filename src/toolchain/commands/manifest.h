#pragma once
// `apexnpu manifest`: the compatibility matrix (templates/compat_matrix.json), and which
// AscendPyTorch releases and branches go with one torch version (--torch).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "manifest/compat_matrix.h"

namespace apexnpu::commands {

struct ManifestQuery {
  std::optional<std::string> torch;  // --torch VERSION
};

// A row of the matrix that lists the queried torch version.
struct ManifestMatch {
  std::string ascend_pytorch;
  std::string pytorch;  // the listed version that matched
  bool beta = false;
  bool exact = false;  // listed exactly; otherwise a pre-/post-release of it
  std::vector<std::string> pytorch_branches;
  std::vector<std::string> apex_branches;
};

struct ManifestResult {
  manifest::CompatMatrix matrix;       // the whole matrix
  std::optional<std::string> torch;    // --torch: the version asked about
  std::vector<ManifestMatch> matches;  // with --torch: the rows for it, exact ones first
  // The --json document: {"matrix"} without --torch, else {"torch", "matches"}.
  nlohmann::json to_json() const;
};

// Throws Error when --torch matches no row (listing the versions the matrix knows).
ManifestResult run_manifest(const ManifestQuery& query);

}  // namespace apexnpu::commands
