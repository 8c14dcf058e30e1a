#pragma once
// Upstream files read one at a time, after an UpstreamContent::blob_ids read listed them: only
// the files known to differ are ever inflated.
#include <optional>
#include <string>

#include "git/libgit2.h"
#include "git/upstream.h"

namespace apexnpu::git {

// Reads through a libgit2 handle of its own (libgit2 handles are not shared between threads:
// one UpstreamBlobs per thread). `upstream` must outlive it.
class UpstreamBlobs {
 public:
  explicit UpstreamBlobs(const UpstreamTree& upstream);

  // Upstream's file at `path`; nullopt when upstream has none there.
  std::optional<FileEntry> read(const std::string& path) const;

 private:
  const UpstreamTree& upstream_;
  Repository repo_;
};

}  // namespace apexnpu::git
