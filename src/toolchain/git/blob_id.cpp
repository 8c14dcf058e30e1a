#include "git/blob_id.h"

#include <fmt/core.h>

#include <cstring>

#include "core/sha1.h"

namespace apexnpu::git {

git_oid blob_id(std::string_view content) {
  const std::string header = fmt::format("blob {}", content.size());
  // The header's terminating NUL is part of what git hashes.
  const Sha1::Digest digest = Sha1().update({header.c_str(), header.size() + 1}).update(content).finish();
  git_oid id;
  std::memcpy(id.id, digest.data(), digest.size());
  return id;
}

}  // namespace apexnpu::git
