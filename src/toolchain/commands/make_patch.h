#pragma once
// `apexnpu make-patch`: an edited Apex tree -> npu.patch (changed and deleted upstream files) +
// overlay/ (files upstream does not have). The inverse of gen.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "git/upstream.h"

namespace apexnpu::commands {

struct MakePatchOptions {
  git::UpstreamRequest upstream;             // --upstream, --ref, --offline, --cache-dir
  std::filesystem::path tree;                // --tree: the edited tree
  std::filesystem::path output = "patches";  // -o: receives npu.patch and overlay/
  std::vector<std::string> excludes;         // --exclude, added to the default excludes
};

struct MakePatchCallbacks {
  std::function<void(const std::string&)> detail;  // -v lines
};

// Writes <output>/npu.patch and replaces <output>/overlay, each atomically. Deterministic: the
// same tree gives byte-identical outputs. Returns the --json result.
nlohmann::json run_make_patch(const MakePatchOptions& options,
                              const MakePatchCallbacks& callbacks = {});

}  // namespace apexnpu::commands
