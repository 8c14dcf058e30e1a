#pragma once
// A local repository read without libgit2, for the everyday case of gen and make-patch on a
// clone on disk: refs, packs and loose objects are read directly, so the command does not wait
// for libgit2's start-up (about 5 ms, TLS certificates included, before any work). What it does
// not read (another object format, reftable refs, a linked worktree, rev-parse expressions
// beyond a name or an id) it declines, and the caller reads the repository with libgit2.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "git/blob_listing.h"
#include "git/object_store.h"
#include "git/ref_store.h"

namespace apexnpu::git {

class LocalRepository {
 public:
  // The repository at `path` (a work tree holding .git, or a bare repository); nullptr when it
  // is not one this reader handles.
  static std::unique_ptr<LocalRepository> open(const std::filesystem::path& path);

  // The commit `ref` names (a full id, a name as `git rev-parse` expands it, or an unambiguous
  // abbreviated id), tags peeled; nullopt when this reader cannot tell (libgit2 decides then).
  std::optional<git_oid> resolve_commit(const std::string& ref) const;

  // The commit's blobs by path, from its tree objects alone; gitlinks skipped and listed.
  BlobListing list_commit_blobs(const git_oid& commit, std::vector<std::string>& skipped_submodules) const;

  // One listed blob's content; `path` names it in errors. Safe from several threads.
  FileEntry read_blob(const std::string& path, const BlobRef& ref) const;

  // Every blob of the commit, read on a few threads.
  FileTree read_commit_tree(const git_oid& commit, std::vector<std::string>& skipped_submodules) const;

 private:
  explicit LocalRepository(const std::filesystem::path& git_dir);
  SharedObject read(const git_oid& id, ObjectType type, const std::string& what) const;
  void list_tree(const git_oid& tree, const std::string& prefix, BlobListing& blobs,
                 std::vector<std::string>& skipped_submodules) const;

  ObjectStore objects_;
  RefStore refs_;
};

}  // namespace apexnpu::git
