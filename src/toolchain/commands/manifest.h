#pragma once
// `apexnpu manifest`: the compatibility matrix (templates/compat_matrix.json) and the questions
// users ask of it: what goes with a PyTorch version (--torch), what a torch_npu version is made
// for (--torch-npu), what goes with a CANN version (--cann), and what a built wheel was made
// for, tested with and goes with (a <wheel>.manifest.json).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "manifest/compat_matrix.h"

namespace apexnpu::commands {

struct ManifestQuery {
  std::optional<std::string> torch;            // --torch VERSION
  std::optional<std::string> torch_npu;        // --torch-npu VERSION
  std::optional<std::string> cann;             // --cann VERSION
  std::optional<std::filesystem::path> wheel;  // a <wheel>.manifest.json
};

// A torch_npu release as answered: its facts, and the Pythons that apply with their source.
struct ReleaseLine {
  std::string torch_npu, torch;
  std::optional<std::string> branch, cann, torch_requirement, note;
  std::vector<std::string> python;
  std::string python_source;  // "" without Pythons
  bool beta = false, historical = false, exact = true;
  std::string source;
  nlohmann::json to_json() const;
};

// A row of the Apex manual's table that answers the question.
struct ApexLine {
  std::string ascend_pytorch;
  std::vector<manifest::TorchVersion> pytorch;  // --torch: the listed version that matched
  std::optional<bool> exact;                    // --torch: listed exactly, else a pre-/post-release of it
  std::vector<std::string> pytorch_branches;
  std::vector<std::string> apex_branches;
  nlohmann::json to_json() const;
};

// --torch: the releases for it, or why there are none.
struct TorchAnswer {
  std::string torch;                               // as asked, without a local part
  std::vector<ReleaseLine> releases;               // for this PyTorch
  std::vector<ApexLine> apex_manual;               // the Apex manual's rows listing it
  std::optional<std::vector<std::string>> python;  // Ascend's Pythons for this PyTorch
  nlohmann::json tested_with;                      // this project's tests on this torch
  bool newer_than_newest = false;                  // newer than every release's PyTorch
  std::optional<ReleaseLine> newest;               // the release for the newest PyTorch
  std::optional<ReleaseLine> older, newer;         // without releases: the nearest ones
  nlohmann::json to_json() const;
};

// A built wheel's manifest: what it was made for and tested with, and what it goes with.
struct WheelAnswer {
  std::filesystem::path file;
  std::string wheel_name, wheel_version, wheel_file, apexnpu_version;
  std::string python_version, python_line, python_tag, abi_tag, platform_tag, architecture;
  std::optional<std::string> upstream_url, upstream_commit, emulator_file;
  nlohmann::json tested_with;
  std::vector<ReleaseLine> releases;  // the releases whose Pythons include the wheel's
  std::string matrix_from;            // "wheel": the matrix it carries; "apexnpu": this one's
  nlohmann::json to_json() const;
};

struct ManifestResult {
  manifest::CompatMatrix matrix;               // the whole matrix (this apexnpu's)
  std::vector<ReleaseLine> releases;           // no question, --torch-npu, --cann: the releases shown
  std::vector<ApexLine> apex_manual;           // no question, --torch-npu: the Apex manual's rows shown
  std::optional<std::string> torch_npu, cann;  // the question asked, if one of these
  std::optional<TorchAnswer> torch;
  std::optional<WheelAnswer> wheel;
  // The --json document: {"matrix", "releases", "apex_manual"} without a question; else the
  // question's key ("torch", "torch_npu", "cann", "wheel") and its answer.
  nlohmann::json to_json() const;
};

// Throws Error for a malformed version, one the matrix does not know (listing those it does),
// and a file that is not a build manifest.
ManifestResult run_manifest(const ManifestQuery& query);

}  // namespace apexnpu::commands
