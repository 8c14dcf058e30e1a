#pragma once
// Reading a commit's tree out of a repository into memory; no work tree needed.
#include <map>
#include <string>
#include <vector>

#include "core/file_tree.h"
#include "git/blob_listing.h"
#include "git/libgit2.h"

namespace apexnpu::git {

// Resolves `ref` (full or short sha, branch, tag, or anything git_revparse_single takes) to a
// commit, tags peeled; nullptr when the repository has nothing by that name. A name that exists
// but cannot be read (a damaged or missing object), or that names no commit, throws Error
// saying so, with `where` naming the repository.
Commit find_commit(git_repository* repo, const std::string& ref, const std::string& where);

std::string commit_sha(const git_commit* commit);

// Every blob of the commit's tree; gitlinks (submodules) are skipped and listed.
FileTree read_commit_tree(git_repository* repo, const git_commit* commit,
                          std::vector<std::string>& skipped_submodules);

// The commit's blobs by path, from its tree objects alone (nothing inflated): what `git status`
// compares a work tree against. Gitlinks are skipped and listed.
BlobListing list_commit_blobs(const git_commit* commit, std::vector<std::string>& skipped_submodules);

// One listed blob's content; `path` names it in errors.
FileEntry read_blob(git_repository* repo, const std::string& path, const BlobRef& ref);

}  // namespace apexnpu::git
