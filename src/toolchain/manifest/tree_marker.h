#pragma once
// gen's record in every tree it writes, .apexnpu-gen.json at its root: what the tree was made
// from (upstream url and commit, the digests of the patch and the overlay) and a digest of the
// files gen wrote. build refuses a --tree without it (one gen did not make, which its manifest
// could not describe), names in the manifest the patch and overlay the tree was made from, and
// says whether the tree's files changed since. make-patch leaves the file out of what it reads.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "core/file_tree.h"

namespace apexnpu::manifest {

inline constexpr const char* kTreeMarkerName = ".apexnpu-gen.json";
inline constexpr int kTreeMarkerSchema = 1;

struct TreeMarker {
  std::string apexnpu_version;
  std::string upstream_url;
  std::string upstream_commit;
  std::string patch_sha256;                   // of the patch file's bytes
  std::optional<std::string> overlay_digest;  // files_digest of the overlay; none with --no-overlay
  std::size_t failed_hunks = 0;               // --keep-rejects: hunks that did not apply
  std::string files_digest;                   // tree_files_digest of the tree gen wrote
};

std::string marker_text(const TreeMarker& marker);
// Throws Error naming `source` when the text is not a marker this version reads.
TreeMarker parse_tree_marker(const std::string& text, const std::string& source);

// files_digest over the tree's files, leaving out the marker and what make-patch leaves out by
// default (build leftovers, byte code, rejects): what an edit of the tree changes.
std::string tree_files_digest(const FileTree& tree);

}  // namespace apexnpu::manifest
