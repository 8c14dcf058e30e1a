#pragma once
// The object id git gives a file's content: SHA-1 of "blob <size>\0" and the bytes, as
// `git hash-object` computes it (libgit2's git_odb_hash), for comparing a work tree with a
// commit as `git status` does.
#include <git2/oid.h>

#include <string_view>

namespace apexnpu::git {

git_oid blob_id(std::string_view content);

}  // namespace apexnpu::git
