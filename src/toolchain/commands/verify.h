#pragma once
// `apexnpu verify PATH`: the checks of wheel/verify.h on a .whl or a wheel layout directory.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace apexnpu::commands {

struct VerifyResult {
  std::filesystem::path path;
  std::size_t files = 0;
  std::string dist_info;           // "apex-0.1+ascend.dist-info"
  std::vector<std::string> tags;   // from WHEEL
  nlohmann::json to_json() const;  // the --json document: these and "ok": true
};

// Throws Error listing every violation when there is any (one per line), so the command exits 1.
VerifyResult run_verify(const std::filesystem::path& path);

}  // namespace apexnpu::commands
