#include "manifest/tree_marker.h"

#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fs/tree_io.h"
#include "manifest/build_manifest.h"

namespace apexnpu::manifest {

std::string marker_text(const TreeMarker& m) {
  const nlohmann::json j = {
      {"schema_version", kTreeMarkerSchema},
      {"made_by", "apexnpu gen " + m.apexnpu_version},
      {"upstream", {{"url", m.upstream_url}, {"commit", m.upstream_commit}}},
      {"patch_sha256", m.patch_sha256},
      {"overlay_digest", m.overlay_digest ? nlohmann::json(*m.overlay_digest) : nlohmann::json(nullptr)},
      {"failed_hunks", m.failed_hunks},
      {"files_digest", m.files_digest},
  };
  return j.dump(2) + "\n";
}

TreeMarker parse_tree_marker(const std::string& text, const std::string& source) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (j.at("schema_version").get<int>() != kTreeMarkerSchema)
      throw Error(fmt::format("{}: schema version {} is not one this apexnpu reads", source,
                              j.at("schema_version").dump()),
                  "regenerate the tree with this apexnpu's gen");
    TreeMarker m;
    const std::string made_by = j.at("made_by").get<std::string>();
    m.apexnpu_version = made_by.substr(made_by.rfind(' ') + 1);
    m.upstream_url = j.at("upstream").at("url").get<std::string>();
    m.upstream_commit = j.at("upstream").at("commit").get<std::string>();
    m.patch_sha256 = j.at("patch_sha256").get<std::string>();
    if (!j.at("overlay_digest").is_null()) m.overlay_digest = j.at("overlay_digest").get<std::string>();
    m.failed_hunks = j.at("failed_hunks").get<std::size_t>();
    m.files_digest = j.at("files_digest").get<std::string>();
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{} is damaged: {}", source, e.what()), "regenerate the tree with `apexnpu gen`");
  }
}

std::string tree_files_digest(const FileTree& tree) {
  std::map<std::string, std::string> files;
  for (const auto& [path, entry] : tree) {
    if (path == kTreeMarkerName || fs::is_excluded(path, fs::default_excludes())) continue;
    // The kind is part of what an edit changes: a mode or a link is an edit too.
    const char kind = entry.kind == FileKind::executable ? 'x' : entry.kind == FileKind::symlink ? 'l' : 'f';
    files.emplace(path, std::string(1, kind) + entry.content);
  }
  return files_digest(files);
}

}  // namespace apexnpu::manifest
