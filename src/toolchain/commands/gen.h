#pragma once
// `apexnpu gen`: upstream Apex at a ref + npu.patch + overlay -> a patched tree in -o.
// The CLI (src/cli/cmd_gen.cpp) only parses options into GenOptions and prints the result.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/file_tree.h"
#include "git/upstream.h"

namespace apexnpu::commands {

struct GenOptions {
  git::UpstreamRequest upstream;                       // --upstream, --ref, --offline, --cache-dir
  std::optional<std::filesystem::path> patch_file;     // --patch; default: the bundled npu.patch
  std::optional<std::filesystem::path> overlay_dir;    // --overlay; default: the bundled overlay
  bool no_overlay = false;                             // --no-overlay
  std::filesystem::path output = "apex";               // -o
  bool force = false;                                  // --force: replace a non-empty output
  bool check = false;                                  // --check: apply in memory, write nothing
  // --keep-rejects: when hunks fail, write the tree anyway (each file with the hunks that
  // applied, its failed ones in <file>.rej beside it) and then fail; for porting to a new
  // upstream commit by hand.
  bool keep_rejects = false;
};

struct GenCallbacks {
  std::function<void(const std::string&)> detail;  // -v lines
};

// The patched tree in memory plus the --json description of how it was made.
struct GenOutcome {
  FileTree tree;
  nlohmann::json result;
  std::size_t failed_hunks = 0;  // only with keep_rejects: the tree then holds their .rej files
  std::string failures;          // the failed hunks, described for the error message
};

// Reads upstream, applies the patch and the overlay, all in memory. Throws apexnpu::Error with
// every failed hunk in the message (and the per-file status in Error::result()) when the patch
// does not apply; `reject_file`, when given, receives the reject report first. With
// keep_rejects it returns instead, the tree holding what applied and the .rej files.
GenOutcome generate_tree(const GenOptions& options, const GenCallbacks& callbacks,
                         const std::optional<std::filesystem::path>& reject_file);

// The whole command: generate_tree, then (unless --check) write the tree to options.output
// atomically. On failure nothing is written to options.output; the rejects go to <output>.rej.
// With keep_rejects the tree with its .rej files is written, then Error names what failed.
nlohmann::json run_gen(const GenOptions& options, const GenCallbacks& callbacks = {});

}  // namespace apexnpu::commands
