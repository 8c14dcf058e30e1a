#pragma once
// libgit2 behind RAII: the library initialised once per process, every handle owned, every
// failure turned into an apexnpu::Error that says what was being done.
#include <git2.h>

#include <memory>
#include <string>

namespace apexnpu::git {

// Initialises libgit2 on first use; shut down at process exit.
void ensure_libgit2();

template <typename T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* p) const noexcept { Free(p); }
};
template <typename T, void (*Free)(T*)>
using GitHandle = std::unique_ptr<T, GitDeleter<T, Free>>;

using Repository = GitHandle<git_repository, git_repository_free>;
using Object = GitHandle<git_object, git_object_free>;
using Commit = GitHandle<git_commit, git_commit_free>;
using Tree = GitHandle<git_tree, git_tree_free>;
using Blob = GitHandle<git_blob, git_blob_free>;
using Remote = GitHandle<git_remote, git_remote_free>;

// Throws apexnpu::Error("<what>: <libgit2's message>") when rc < 0; returns rc otherwise.
int check(int rc, const std::string& what);

}  // namespace apexnpu::git
