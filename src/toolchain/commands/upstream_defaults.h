#pragma once
// What gen, make-patch and build read when --upstream or --ref are not given: the url and commit
// of patches/UPSTREAM, the one place the pinned upstream is written down.
#include "core/data_dir.h"
#include "git/upstream.h"

namespace apexnpu::commands {

// patches/UPSTREAM of the bundled data; throws Error naming the file when it is missing or bad.
UpstreamPin pinned_upstream();

// `request` with an empty upstream or ref replaced by the pinned one.
git::UpstreamRequest with_pinned_defaults(git::UpstreamRequest request);

}  // namespace apexnpu::commands
