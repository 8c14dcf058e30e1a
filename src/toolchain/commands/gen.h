#pragma once
// `apexnpu gen`: upstream Apex at a ref + npu.patch + overlay -> a patched tree in -o.
// The CLI (src/cli/cmd_gen.cpp) only parses options into GenOptions and prints the result.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands/phase_timer.h"
#include "commands/upstream_report.h"
#include "core/file_tree.h"
#include "fs/output_guard.h"
#include "git/upstream.h"
#include "manifest/tree_marker.h"
#include "patch/patch_engine.h"

namespace apexnpu::commands {

struct GenOptions {
  git::UpstreamRequest upstream;                     // --upstream, --ref, --offline, --clone-cache
  std::optional<std::filesystem::path> patch_file;   // --patch; default: the bundled npu.patch
  std::optional<std::filesystem::path> overlay_dir;  // --overlay; default: the bundled overlay
  bool no_overlay = false;                           // --no-overlay
  std::filesystem::path output = "apex";             // -o
  bool force = false;                                // --force: replace a non-empty output
  bool check = false;                                // --check: apply in memory, write nothing
  // --keep-rejects: when hunks fail, write the tree anyway (each file with the hunks that
  // applied, its failed ones in <file>.rej beside it) and then fail; for porting to a new
  // upstream commit by hand.
  bool keep_rejects = false;
};

struct GenCallbacks {
  std::function<void(const std::string&)> detail;  // -v lines
};

// How applying the patch went: the part of gen's result that a failed patch reports too (in
// Error::result()).
struct PatchReport {
  UpstreamReport upstream;
  std::filesystem::path patch;                       // the patch file applied
  std::vector<patch::FileReport> files;              // one per file patch, in patch order
  std::optional<std::filesystem::path> reject_file;  // a failed patch: where its rejects went
  Timings timings;
  nlohmann::json to_json() const;
};

struct GenResult : PatchReport {
  std::vector<std::string> overlay_files;           // the files the overlay added
  std::optional<std::filesystem::path> overlay;     // the overlay, when it completed a clean tree
  std::optional<std::vector<std::string>> rejects;  // --keep-rejects: the <file>.rej files kept
  bool check = false;                               // --check: nothing was written
  std::size_t tree_files = 0;
  std::optional<std::filesystem::path> output;  // where the tree was written
  nlohmann::json to_json() const;               // the --json document
};

// The patched tree in memory plus how it was made.
struct GenOutcome {
  FileTree tree;                 // without its marker (run_gen adds it when it writes the tree)
  manifest::TreeMarker marker;   // what the tree was made from
  GenResult result;              // check, tree_files and output are left to run_gen
  std::size_t failed_hunks = 0;  // only with keep_rejects: the tree then holds their .rej files
  std::string failures;          // the failed hunks, described for the error message
};

// What gen reads, before anything is applied or written: the patch (parsed), the overlay and
// upstream's tree.
struct GenInputs {
  std::filesystem::path patch_file;
  patch::PatchSet patch_set;
  std::filesystem::path overlay_dir;
  std::optional<FileTree> overlay;  // none with --no-overlay
  std::string patch_sha256;         // of the patch file read
  git::UpstreamTree upstream;
  PhaseTimer timer;
  // Every path read: what no output may be, hold or lie inside.
  std::vector<fs::ReadPath> read_paths() const;
};

// Reads the patch and the overlay first (a patch that does not parse fails before upstream is
// fetched or read), then upstream.
GenInputs read_gen_inputs(const GenOptions& options, const GenCallbacks& callbacks);

// Applies the patch and the overlay to upstream's tree, in memory; see generate_tree.
GenOutcome apply_gen_inputs(GenInputs inputs, const GenOptions& options,
                            const std::optional<std::filesystem::path>& reject_file);

// Reads upstream, applies the patch and the overlay, all in memory. Throws apexnpu::Error with
// every failed hunk in the message (and the PatchReport in Error::result()) when the patch
// does not apply; `reject_file`, when given, receives the reject report first. With
// keep_rejects it returns instead, the tree holding what applied and the .rej files.
GenOutcome generate_tree(const GenOptions& options, const GenCallbacks& callbacks,
                         const std::optional<std::filesystem::path>& reject_file);

// The words printed for a file's outcome ("clean", "modify", ...): the CLI reaches patch/ only
// through this layer (docs/ARCHITECTURE.md's table).
inline std::string_view status_name(const patch::FileReport& file) { return patch::to_string(file.status); }
inline std::string_view operation_name(const patch::FileReport& file) {
  return patch::to_string(file.operation);
}

// The whole command: generate_tree, then (unless --check) write the tree, with its marker
// (manifest/tree_marker.h), to options.output atomically. On failure nothing is written to options.output;
// the rejects go to <output>.rej. With keep_rejects the tree with its .rej files is written, then Error names
// what failed.
GenResult run_gen(const GenOptions& options, const GenCallbacks& callbacks = {});

}  // namespace apexnpu::commands
