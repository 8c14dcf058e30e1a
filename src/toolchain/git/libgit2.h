#pragma once
// libgit2 behind RAII, loaded when first needed. The toolchain does not link it: the commands
// that never need it (build from a tree, verify, manifest) start without loading it and the ~20
// libraries it brings (TLS, Kerberos, SSH). Every libgit2 function the toolchain calls is listed
// here and called through libgit2().
#include <git2.h>
#include <git2/sys/repository.h>  // git_repository_set_odb

#include <memory>
#include <string>

namespace apexnpu::git {

// One X per function, packed as written: clang-format would stair-step the list.
// clang-format off
#define APEXNPU_LIBGIT2_FUNCTIONS(X)                                                             \
  X(git_libgit2_init) X(git_libgit2_shutdown) X(git_error_last) X(git_error_set_str)             \
  X(git_oid_tostr) X(git_repository_open_ext) X(git_repository_open_bare)                        \
  X(git_repository_path) X(git_repository_workdir) X(git_repository_commondir)                   \
  X(git_repository_free) X(git_repository_set_odb) X(git_odb_new) X(git_odb_free)                \
  X(git_odb_add_backend) X(git_odb_add_alternate) X(git_odb_backend_loose)                       \
  X(git_odb_backend_one_pack) X(git_odb_hash) X(git_revparse_single) X(git_reference_dwim)       \
  X(git_reference_resolve) X(git_reference_target) X(git_repository_odb) X(git_odb_exists)       \
  X(git_reference_free) X(git_object_peel) X(git_object_free) X(git_commit_id)                   \
  X(git_commit_tree) X(git_commit_free) X(git_tree_walk) X(git_tree_free)                        \
  X(git_tree_entry_name) X(git_tree_entry_id) X(git_tree_entry_filemode) X(git_blob_lookup)      \
  X(git_blob_rawcontent) X(git_blob_rawsize) X(git_blob_free) X(git_clone_options_init)          \
  X(git_clone) X(git_fetch_options_init) X(git_remote_create_with_fetchspec)                     \
  X(git_remote_lookup) X(git_remote_fetch) X(git_remote_free)
// clang-format on

// The functions, as loaded from the library the toolchain was compiled against.
struct Libgit2 {
#define APEXNPU_LIBGIT2_MEMBER(name) decltype(&::name) name = nullptr;
  APEXNPU_LIBGIT2_FUNCTIONS(APEXNPU_LIBGIT2_MEMBER)
#undef APEXNPU_LIBGIT2_MEMBER
};

// libgit2, loaded and initialised on first use (shut down at exit). Throws Error naming the
// library when it cannot be loaded or lacks a function.
const Libgit2& libgit2();

template <typename T, auto Libgit2::*Free>
struct GitDeleter {
  void operator()(T* p) const noexcept { (libgit2().*Free)(p); }
};
template <typename T, auto Libgit2::*Free>
using GitHandle = std::unique_ptr<T, GitDeleter<T, Free>>;

using Repository = GitHandle<git_repository, &Libgit2::git_repository_free>;
using Object = GitHandle<git_object, &Libgit2::git_object_free>;
using Commit = GitHandle<git_commit, &Libgit2::git_commit_free>;
using Tree = GitHandle<git_tree, &Libgit2::git_tree_free>;
using Blob = GitHandle<git_blob, &Libgit2::git_blob_free>;
using Remote = GitHandle<git_remote, &Libgit2::git_remote_free>;
using Odb = GitHandle<git_odb, &Libgit2::git_odb_free>;
using Reference = GitHandle<git_reference, &Libgit2::git_reference_free>;

// Throws apexnpu::Error("<what>: <libgit2's message>") when rc < 0; returns rc otherwise.
int check(int rc, const std::string& what);

}  // namespace apexnpu::git
