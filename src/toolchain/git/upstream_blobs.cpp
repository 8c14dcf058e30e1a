#include "git/upstream_blobs.h"

#include <fmt/core.h>

#include "git/guarded_objects.h"
#include "git/tree_reader.h"

namespace apexnpu::git {

UpstreamBlobs::UpstreamBlobs(const UpstreamTree& upstream)
    : upstream_(upstream), repo_(open_repository(upstream.repository)) {}

std::optional<FileEntry> UpstreamBlobs::read(const std::string& path) const {
  const auto it = upstream_.blobs.find(path);
  if (it == upstream_.blobs.end()) return std::nullopt;
  return read_blob(repo_.get(), path, it->second);
}

}  // namespace apexnpu::git
