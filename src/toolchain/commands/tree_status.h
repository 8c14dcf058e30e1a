#pragma once
// How an edited tree differs from a commit, seen as `git status` sees a work tree: each file
// hashed as a git blob and its id compared with the commit's, so no upstream blob is inflated
// and no file compared byte by byte unless it differs.
#include <git2.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/file_tree.h"
#include "git/tree_reader.h"

namespace apexnpu::commands {

// A tree and each file's blob id, in the tree's (sorted) order.
struct HashedTree {
  FileTree files;
  std::vector<git_oid> ids;
};

// The tree under `root` read and hashed at once: each file hashed by the thread that read it.
HashedTree read_hashed_tree(const std::filesystem::path& root, const std::vector<std::string>& excludes);

struct TreeStatus {
  std::vector<std::string> changed;  // in both; content or kind differs
  std::vector<std::string> deleted;  // the commit's only, and not excluded
  std::vector<std::string> added;    // the edited tree's only
};                                   // each sorted

// Compares the edited tree with the commit's blobs; the commit's paths that match `excludes` are
// left out (the edited tree was read without them).
TreeStatus compare_with_commit(const git::BlobListing& commit, const HashedTree& edited,
                               const std::vector<std::string>& excludes);

}  // namespace apexnpu::commands
