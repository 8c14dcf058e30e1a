#pragma once
// How gen and make-patch describe the upstream they read.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "git/upstream.h"

namespace apexnpu::commands {

struct UpstreamReport {
  std::string url;
  std::string commit;                // the full sha read
  std::filesystem::path repository;  // read in place, or the clone cache's copy
  bool read_in_place = false;
  bool fetched = false;   // this run went to the network
  std::size_t files = 0;  // in the upstream tree
  std::vector<std::string> skipped_submodules;
  nlohmann::json to_json() const;
};

UpstreamReport describe_upstream(const git::UpstreamTree& upstream);

}  // namespace apexnpu::commands
