#pragma once
// Upstream Apex as a tree at a commit. A local path is read in place (no clone); a remote or
// file:// URL is cloned once into the cache and only fetched afterwards.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/file_tree.h"
#include "git/blob_listing.h"

namespace apexnpu::git {

struct TransferProgress {
  std::size_t received_objects = 0;
  std::size_t total_objects = 0;
  std::size_t received_bytes = 0;
};

struct UpstreamRequest {
  std::string upstream;             // a local path, a file:// URL or a remote URL
  std::string ref;                  // full or short sha, branch or tag
  bool offline = false;             // never touch the network; fail if the cache lacks the ref
  std::filesystem::path cache_dir;  // empty: $XDG_CACHE_HOME/apexnpu, else ~/.cache/apexnpu
  std::function<void(const TransferProgress&)> on_progress;  // clone/fetch progress, may be empty
};

// What read_upstream reads of the commit's tree: every file's content, or only its blob ids.
enum class UpstreamContent { files, blob_ids };

struct UpstreamTree {
  FileTree tree;                     // every blob at the commit (gitlinks skipped); empty
                                     // when only blob ids were read
  BlobListing blobs;                 // with UpstreamContent::blob_ids: each blob's id and kind
  std::string commit;                // full sha the ref resolved to
  std::string url;                   // the upstream as given (normalised for paths)
  std::filesystem::path repository;  // the repository read (in place, or the cache copy)
  bool read_in_place = false;        // a local path, no clone
  // Every directory the read may use (work tree, git directory, common directory, alternates):
  // what a command must never write into.
  std::vector<std::filesystem::path> read_dirs;
  bool fetched = false;  // this run went to the network (clone or fetch)
  std::vector<std::string> skipped_submodules;

  // How many files upstream has at the commit, whichever way it was read.
  std::size_t file_count() const { return tree.size() + blobs.size(); }  // one of them is empty
};

// Resolves the request to a commit and reads its tree. Throws apexnpu::Error naming the upstream
// and ref on failure (unknown ref, offline without a cached copy, network errors, ...).
UpstreamTree read_upstream(const UpstreamRequest& request, UpstreamContent content = UpstreamContent::files);

// The cache directory used when UpstreamRequest::cache_dir is empty.
std::filesystem::path default_cache_dir();

}  // namespace apexnpu::git
