#pragma once
// The object id git gives a file's content: SHA-1 of "blob <size>\0" and the bytes, as
// `git hash-object` computes it. Computed with OpenSSL's SHA-1 (several times faster than
// libgit2's collision-detecting one), for comparing a work tree with a commit as `git status`
// does.
#include <git2.h>

#include <string_view>

namespace apexnpu::git {

git_oid blob_id(std::string_view content);

}  // namespace apexnpu::git
