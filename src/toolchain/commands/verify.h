#pragma once
// `apexnpu verify PATH`: the checks of wheel/verify.h on a .whl or a wheel layout directory.
#include <filesystem>
#include <nlohmann/json.hpp>

namespace apexnpu::commands {

// Returns {path, ok, files, dist_info, tags}; throws Error listing every violation when there is
// any (one per line), so the command exits 1.
nlohmann::json run_verify(const std::filesystem::path& path);

}  // namespace apexnpu::commands
