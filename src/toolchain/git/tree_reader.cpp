#include "git/tree_reader.h"

#include <fmt/core.h>

#include <algorithm>
#include <thread>

#include "core/error.h"

namespace apexnpu::git {

Commit resolve_commit(git_repository* repo, const std::string& ref) {
  git_object* raw = nullptr;
  if (git_revparse_single(&raw, repo, ref.c_str()) != 0) return nullptr;
  Object object(raw);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, object.get(), GIT_OBJECT_COMMIT) != 0) return nullptr;
  return Commit(reinterpret_cast<git_commit*>(peeled));
}

std::string commit_sha(const git_commit* commit) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, git_commit_id(commit));
  return hex;
}

namespace {

// A blob to read: where it goes and what it is.
struct BlobEntry {
  std::string path;
  git_oid id;
  FileKind kind;
};

struct WalkState {
  std::vector<BlobEntry>* blobs;
  std::vector<std::string>* skipped;
};

int visit_entry(const char* root, const git_tree_entry* entry, void* payload) {
  auto& state = *static_cast<WalkState*>(payload);
  const git_filemode_t mode = git_tree_entry_filemode(entry);
  if (mode == GIT_FILEMODE_TREE) return 0;
  std::string path = std::string(root) + git_tree_entry_name(entry);
  if (mode == GIT_FILEMODE_COMMIT) {
    state.skipped->push_back(std::move(path));
    return 0;
  }
  const FileKind kind = mode == GIT_FILEMODE_BLOB_EXECUTABLE ? FileKind::executable
                        : mode == GIT_FILEMODE_LINK          ? FileKind::symlink
                                                             : FileKind::regular;
  state.blobs->push_back({std::move(path), *git_tree_entry_id(entry), kind});
  return 0;
}

// Reads blobs[first], blobs[first + stride], ... through its own repository handle (libgit2
// handles are not shared between threads). Returns an error message, empty on success.
std::string read_blobs(const std::string& repo_path, const std::vector<BlobEntry>& blobs,
                       std::vector<FileEntry>& out, std::size_t first, std::size_t stride) {
  git_repository* raw_repo = nullptr;
  if (git_repository_open_ext(&raw_repo, repo_path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0)
    return fmt::format("cannot open {}", repo_path);
  Repository repo(raw_repo);
  for (std::size_t i = first; i < blobs.size(); i += stride) {
    git_blob* raw = nullptr;
    if (git_blob_lookup(&raw, repo.get(), &blobs[i].id) != 0) {
      const git_error* e = git_error_last();
      return fmt::format("cannot read {}: {}", blobs[i].path, e != nullptr ? e->message : "missing object");
    }
    Blob blob(raw);
    out[i].content.assign(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                          static_cast<std::size_t>(git_blob_rawsize(blob.get())));
    out[i].kind = blobs[i].kind;
  }
  return {};
}

}  // namespace

FileTree read_commit_tree(git_repository* repo, const git_commit* commit,
                          std::vector<std::string>& skipped_submodules) {
  git_tree* raw = nullptr;
  check(git_commit_tree(&raw, commit), fmt::format("cannot read the tree of {}", commit_sha(commit)));
  Tree tree(raw);
  std::vector<BlobEntry> blobs;
  WalkState state{&blobs, &skipped_submodules};
  check(git_tree_walk(tree.get(), GIT_TREEWALK_PRE, visit_entry, &state),
        fmt::format("cannot walk the tree of {}", commit_sha(commit)));

  // Inflating blobs is most of the work: spread it over a few threads.
  const std::string repo_path = git_repository_path(repo);
  const std::size_t threads =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, blobs.size() < 64 ? 1 : 4);
  std::vector<FileEntry> contents(blobs.size());
  std::vector<std::string> errors(threads);
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t)
    workers.emplace_back([&, t] { errors[t] = read_blobs(repo_path, blobs, contents, t, threads); });
  errors[0] = read_blobs(repo_path, blobs, contents, 0, threads);
  for (auto& w : workers) w.join();
  for (const auto& e : errors)
    if (!e.empty()) throw Error(e, "the repository is incomplete; fetch it again");

  FileTree files;
  for (std::size_t i = 0; i < blobs.size(); ++i) files.emplace(std::move(blobs[i].path), std::move(contents[i]));
  return files;
}

}  // namespace apexnpu::git
