#include "git/upstream_blobs.h"

#include <fmt/core.h>

#include "git/local_repository.h"
#include "git/tree_reader.h"

namespace apexnpu::git {

namespace {

Repository open_repository(const std::filesystem::path& path) {
  git_repository* raw = nullptr;
  check(libgit2().git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
        fmt::format("cannot open the upstream repository {}", path.string()));
  return Repository(raw);
}

}  // namespace

UpstreamBlobs::UpstreamBlobs(const UpstreamTree& upstream)
    : upstream_(upstream), repo_(upstream.local ? Repository() : open_repository(upstream.repository)) {}

std::optional<FileEntry> UpstreamBlobs::read(const std::string& path) const {
  const auto it = upstream_.blobs.find(path);
  if (it == upstream_.blobs.end()) return std::nullopt;
  if (upstream_.local) return upstream_.local->read_blob(path, it->second);
  return read_blob(repo_.get(), path, it->second);
}

}  // namespace apexnpu::git
