#include "commands/upstream_report.h"

namespace apexnpu::commands {

UpstreamReport describe_upstream(const git::UpstreamTree& upstream) {
  return {upstream.url,     upstream.commit,       upstream.repository,        upstream.read_in_place,
          upstream.fetched, upstream.file_count(), upstream.skipped_submodules};
}

nlohmann::json UpstreamReport::to_json() const {
  return {{"url", url},
          {"commit", commit},
          {"repository", repository.string()},
          {"read_in_place", read_in_place},
          {"fetched", fetched},
          {"files", files},
          {"skipped_submodules", skipped_submodules}};
}

}  // namespace apexnpu::commands
