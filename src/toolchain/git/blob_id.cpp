#include "git/blob_id.h"

#include "git/libgit2.h"

namespace apexnpu::git {

git_oid blob_id(std::string_view content) {
  git_oid id;
  check(libgit2().git_odb_hash(&id, content.data(), content.size(), GIT_OBJECT_BLOB),
        "cannot hash a file as a git blob");
  return id;
}

}  // namespace apexnpu::git
