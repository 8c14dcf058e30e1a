#pragma once
// make-patch's npu.patch: the differing paths of an edited tree against upstream's files, each
// upstream blob read and its section written on a few threads, joined in write_patch's order.
#include <string>
#include <vector>

#include "core/file_tree.h"
#include "git/upstream.h"

namespace apexnpu::commands {

// What patch::write_patch(upstream's tree, edited, paths) gives, from an
// UpstreamContent::blob_ids read. Throws the error of the first failing path in patch order.
std::string write_upstream_patch(const git::UpstreamTree& upstream, const FileTree& edited,
                                 const std::vector<std::string>& paths);

}  // namespace apexnpu::commands
