#include "manifest/build_manifest.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/sha256.h"
#include "fs/file_io.h"

namespace apexnpu::manifest {
namespace stdfs = std::filesystem;

namespace {
nlohmann::json opt(const std::optional<std::string>& s) {
  return s ? nlohmann::json(*s) : nlohmann::json(nullptr);
}
}  // namespace

nlohmann::json to_json(const BuildManifest& m) {
  return {
      {"schema_version", kManifestSchemaVersion},
      {"apexnpu_version", m.apexnpu_version},
      {"wheel", {{"name", m.wheel_name}, {"version", m.wheel_version}, {"file", m.wheel_file}}},
      {"source",
       {{"upstream_url", opt(m.upstream_url)},
        {"upstream_commit", opt(m.upstream_commit)},
        {"tree", m.tree_source},
        {"patch_sha256", opt(m.patch_sha256)},
        {"overlay_digest", opt(m.overlay_digest)},
        {"tree_modified", m.tree_modified ? nlohmann::json(*m.tree_modified) : nlohmann::json(nullptr)}}},
      {"python",
       {{"version", m.python_version},
        {"implementation", m.python_implementation},
        {"python_tag", m.python_tag},
        {"abi_tag", m.abi_tag},
        {"platform_tag", m.platform_tag},
        {"ext_suffix", m.ext_suffix}}},
      {"compiler",
       {{"command", m.compiler_command},
        {"version", m.compiler_version},
        {"compile_flags", m.compile_flags},
        {"link_flags", m.link_flags}}},
      {"runtime",
       {{"version", m.runtime_version},
        {"architecture", m.architecture},
        {"optimizers", m.optimizers},
        {"optimizer_classes", m.optimizer_classes},
        {"isa_levels", m.isa_levels},
        {"modules", m.modules}}},
      {"emulator", m.emulator ? nlohmann::json{{"name", m.emulator->name},
                                               {"file", m.emulator->file},
                                               {"source_digest", m.emulator->source_digest}}
                              : nlohmann::json(nullptr)},
      {"build_time",
       {{"unix_time", m.build_time}, {"from_source_date_epoch", m.build_time_from_source_date_epoch}}},
      {"compatibility", m.compat_matrix},
      {"tested_with", m.tested_with},
  };
}

std::string files_digest(const std::map<std::string, std::string>& files) {
  Sha256 h;
  for (const auto& [rel, bytes] : files) {
    h.update(rel)
        .update(std::string_view("\0", 1))
        .update(std::to_string(bytes.size()))
        .update(std::string_view("\0", 1))
        .update(bytes);
  }
  return to_hex(h.finish());
}

}  // namespace apexnpu::manifest
