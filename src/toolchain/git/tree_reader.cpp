#include "git/tree_reader.h"

#include <fmt/core.h>

#include <optional>
#include <string>

#include "core/error.h"
#include "core/job_pool.h"
#include "git/guarded_objects.h"
#include "git/listed_blobs.h"

namespace apexnpu::git {

namespace {

std::string last_error() {
  const git_error* e = libgit2().git_error_last();
  return e != nullptr && e->message != nullptr ? e->message : "unknown libgit2 error";
}

constexpr const char* kDamagedHint =
    "the repository is damaged or incomplete: fetch or clone it again (git fsck names what is wrong)";

// The id a reference named `ref` finally points at, when that object is not in the repository.
// libgit2 1.5.1's revparse leaks the reference it read when its object is missing, so a named
// reference is resolved and its object looked for first.
std::optional<std::string> missing_target(git_repository* repo, const std::string& ref) {
  git_reference* raw = nullptr;
  if (libgit2().git_reference_dwim(&raw, repo, ref.c_str()) != 0) return std::nullopt;
  const Reference named(raw);
  if (libgit2().git_reference_resolve(&raw, named.get()) != 0) return std::nullopt;
  const Reference direct(raw);
  const git_oid* target = libgit2().git_reference_target(direct.get());
  git_odb* odb_raw = nullptr;
  if (target == nullptr || libgit2().git_repository_odb(&odb_raw, repo) != 0) return std::nullopt;
  const Odb odb(odb_raw);
  if (libgit2().git_odb_exists(odb.get(), target) != 0) return std::nullopt;
  char hex[GIT_OID_HEXSZ + 1];
  libgit2().git_oid_tostr(hex, sizeof hex, target);
  return std::string(hex);
}

}  // namespace

Commit find_commit(git_repository* repo, const std::string& ref, const std::string& where) {
  if (const auto missing = missing_target(repo, ref))
    throw Error(fmt::format("the ref {} in {} names an object that cannot be read: object {} is "
                            "not in the repository",
                            ref, where, *missing),
                kDamagedHint);
  git_object* raw = nullptr;
  const int rc = libgit2().git_revparse_single(&raw, repo, ref.c_str());
  if (rc == GIT_ENOTFOUND) {
    // Not found: either nothing has that name, or a reference has it and its object is missing.
    const std::string why = last_error();  // before the lookup below sets its own
    git_reference* named = nullptr;
    if (libgit2().git_reference_dwim(&named, repo, ref.c_str()) != 0) return nullptr;
    libgit2().git_reference_free(named);
    throw Error(fmt::format("the ref {} in {} names an object that cannot be read: {}", ref, where, why),
                kDamagedHint);
  }
  if (rc == GIT_EAMBIGUOUS)
    throw UsageError(fmt::format("the ref {} is ambiguous in {}: {}", ref, where, last_error()),
                     "pass more digits of the commit, or a full ref name");
  if (rc != 0)
    throw Error(fmt::format("cannot read the ref {} in {}: {}", ref, where, last_error()), kDamagedHint);
  Object object(raw);
  git_object* peeled = nullptr;
  if (libgit2().git_object_peel(&peeled, object.get(), GIT_OBJECT_COMMIT) != 0)
    throw Error(fmt::format("the ref {} in {} does not lead to a commit: {}", ref, where, last_error()),
                "pass --ref with a branch, tag or commit");
  return Commit(reinterpret_cast<git_commit*>(peeled));
}

std::string commit_sha(const git_commit* commit) {
  char hex[GIT_OID_HEXSZ + 1];
  libgit2().git_oid_tostr(hex, sizeof hex, libgit2().git_commit_id(commit));
  return hex;
}

FileEntry read_blob(git_repository* repo, const std::string& path, const BlobRef& ref) {
  git_blob* raw = nullptr;
  if (libgit2().git_blob_lookup(&raw, repo, &ref.id) != 0) {
    const git_error* e = libgit2().git_error_last();
    throw Error(fmt::format("cannot read {}: {}", path, e != nullptr ? e->message : "missing object"),
                kDamagedHint);
  }
  Blob blob(raw);
  return {std::string(static_cast<const char*>(libgit2().git_blob_rawcontent(blob.get())),
                      static_cast<std::size_t>(libgit2().git_blob_rawsize(blob.get()))),
          ref.kind};
}

namespace {

struct WalkState {
  BlobListing* blobs;
  std::vector<std::string>* skipped;
};

int visit_entry(const char* root, const git_tree_entry* entry, void* payload) {
  auto& state = *static_cast<WalkState*>(payload);
  const git_filemode_t mode = libgit2().git_tree_entry_filemode(entry);
  if (mode == GIT_FILEMODE_TREE) return 0;
  std::string path = std::string(root) + libgit2().git_tree_entry_name(entry);
  if (mode == GIT_FILEMODE_COMMIT) {
    state.skipped->push_back(std::move(path));
    return 0;
  }
  const FileKind kind = mode == GIT_FILEMODE_BLOB_EXECUTABLE ? FileKind::executable
                        : mode == GIT_FILEMODE_LINK          ? FileKind::symlink
                                                             : FileKind::regular;
  state.blobs->emplace(std::move(path), BlobRef{*libgit2().git_tree_entry_id(entry), kind});
  return 0;
}

}  // namespace

BlobListing list_commit_blobs(const git_commit* commit, std::vector<std::string>& skipped_submodules) {
  git_tree* raw = nullptr;
  check(libgit2().git_commit_tree(&raw, commit),
        fmt::format("cannot read the tree of {}", commit_sha(commit)));
  Tree tree(raw);
  BlobListing blobs;
  WalkState state{&blobs, &skipped_submodules};
  check(libgit2().git_tree_walk(tree.get(), GIT_TREEWALK_PRE, visit_entry, &state),
        fmt::format("cannot walk the tree of {}", commit_sha(commit)));
  return blobs;
}

FileTree read_commit_tree(git_repository* repo, const git_commit* commit,
                          std::vector<std::string>& skipped_submodules) {
  const BlobListing listing = list_commit_blobs(commit, skipped_submodules);
  const std::string repo_path = libgit2().git_repository_path(repo);
  return read_listed_blobs(listing,
                           // opening a repository per thread costs more than a few blobs take
                           listing.size() < 64 ? 1 : core::thread_count(core::WorkKind::io), [&] {
                             return [thread_repo = open_repository(repo_path)](const std::string& path,
                                                                               const BlobRef& ref) {
                               return read_blob(thread_repo.get(), path, ref);
                             };
                           });
}

}  // namespace apexnpu::git
