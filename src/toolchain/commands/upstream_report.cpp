#include "commands/upstream_report.h"

namespace apexnpu::commands {

nlohmann::json describe_upstream(const git::UpstreamTree& upstream) {
  return {{"url", upstream.url},
          {"commit", upstream.commit},
          {"repository", upstream.repository.string()},
          {"read_in_place", upstream.read_in_place},
          {"fetched", upstream.fetched},
          {"files", upstream.tree.size()},
          {"skipped_submodules", upstream.skipped_submodules}};
}

}  // namespace apexnpu::commands
