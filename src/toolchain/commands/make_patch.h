#pragma once
// `apexnpu make-patch`: an edited Apex tree -> npu.patch (changed and deleted upstream files) +
// overlay/ (files upstream does not have). The inverse of gen.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands/phase_timer.h"
#include "commands/upstream_report.h"
#include "git/upstream.h"

namespace apexnpu::commands {

struct MakePatchOptions {
  git::UpstreamRequest upstream;             // --upstream, --ref, --offline, --clone-cache
  std::filesystem::path tree;                // --tree: the edited tree
  std::filesystem::path output = "patches";  // -o: receives npu.patch and overlay/
  std::vector<std::string> excludes;         // --exclude, added to the default excludes
};

struct MakePatchCallbacks {
  std::function<void(const std::string&)> detail;  // -v lines
};

struct MakePatchResult {
  UpstreamReport upstream;
  std::filesystem::path tree;
  std::filesystem::path patch;             // <output>/npu.patch
  std::filesystem::path overlay;           // <output>/overlay
  std::vector<std::string> changed;        // upstream files the patch edits
  std::vector<std::string> deleted;        // upstream files the patch removes
  std::vector<std::string> overlay_files;  // files upstream does not have
  std::size_t patch_bytes = 0;
  std::vector<std::string> excludes;  // every glob left out, the defaults first
  Timings timings;
  nlohmann::json to_json() const;  // the --json document
};

// Replaces <output>/npu.patch and <output>/overlay together (fs/directory_update.h): the old pair
// or the new one, never a mix. Deterministic: the same tree gives byte-identical outputs.
MakePatchResult run_make_patch(const MakePatchOptions& options, const MakePatchCallbacks& callbacks = {});

}  // namespace apexnpu::commands
