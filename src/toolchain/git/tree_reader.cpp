#include "git/tree_reader.h"

#include <fmt/core.h>

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

struct WalkState {
  git_repository* repo;
  FileTree* tree;
  std::vector<std::string>* skipped;
  std::string error;
};

int visit_entry(const char* root, const git_tree_entry* entry, void* payload) {
  auto& state = *static_cast<WalkState*>(payload);
  const std::string path = std::string(root) + git_tree_entry_name(entry);
  const git_filemode_t mode = git_tree_entry_filemode(entry);
  if (mode == GIT_FILEMODE_COMMIT) {
    state.skipped->push_back(path);
    return 0;
  }
  if (mode == GIT_FILEMODE_TREE) return 0;
  git_blob* raw = nullptr;
  if (git_blob_lookup(&raw, state.repo, git_tree_entry_id(entry)) != 0) {
    const git_error* e = git_error_last();
    state.error = fmt::format("cannot read {}: {}", path, e != nullptr ? e->message : "missing object");
    return -1;
  }
  Blob blob(raw);
  FileEntry file;
  file.content.assign(static_cast<const char*>(git_blob_rawcontent(blob.get())),
                      static_cast<std::size_t>(git_blob_rawsize(blob.get())));
  file.kind = mode == GIT_FILEMODE_BLOB_EXECUTABLE ? FileKind::executable
              : mode == GIT_FILEMODE_LINK          ? FileKind::symlink
                                                   : FileKind::regular;
  state.tree->emplace(path, std::move(file));
  return 0;
}

}  // namespace

FileTree read_commit_tree(git_repository* repo, const git_commit* commit,
                          std::vector<std::string>& skipped_submodules) {
  git_tree* raw = nullptr;
  check(git_commit_tree(&raw, commit), fmt::format("cannot read the tree of {}", commit_sha(commit)));
  Tree tree(raw);
  FileTree files;
  WalkState state{repo, &files, &skipped_submodules, {}};
  if (git_tree_walk(tree.get(), GIT_TREEWALK_PRE, visit_entry, &state) != 0) {
    if (!state.error.empty()) throw Error(state.error, "the repository is incomplete; fetch it again");
    check(-1, fmt::format("cannot walk the tree of {}", commit_sha(commit)));
  }
  return files;
}

}  // namespace apexnpu::git
