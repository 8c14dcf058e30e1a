#include "git/upstream_blobs.h"

#include <fmt/core.h>

#include "git/tree_reader.h"

namespace apexnpu::git {

namespace {

Repository open_repository(const std::filesystem::path& path) {
  git_repository* raw = nullptr;
  check(git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr),
        fmt::format("cannot open the upstream repository {}", path.string()));
  return Repository(raw);
}

}  // namespace

UpstreamBlobs::UpstreamBlobs(const UpstreamTree& upstream)
    : listing_(upstream.blobs), repo_(open_repository(upstream.repository)) {}

std::optional<FileEntry> UpstreamBlobs::read(const std::string& path) const {
  const auto it = listing_.find(path);
  if (it == listing_.end()) return std::nullopt;
  return read_blob(repo_.get(), path, it->second);
}

}  // namespace apexnpu::git
