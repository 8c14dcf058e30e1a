#include "git/libgit2.h"

#include <fmt/core.h>

#include "core/error.h"

namespace apexnpu::git {

namespace {

struct LibGit2Session {
  LibGit2Session() { git_libgit2_init(); }
  ~LibGit2Session() { git_libgit2_shutdown(); }
};

}  // namespace

void ensure_libgit2() { static const LibGit2Session session; }

int check(int rc, const std::string& what) {
  if (rc >= 0) return rc;
  const git_error* e = git_error_last();
  throw Error(fmt::format("{}: {}", what, e != nullptr && e->message != nullptr ? e->message
                                                                               : "unknown libgit2 error"));
}

}  // namespace apexnpu::git
