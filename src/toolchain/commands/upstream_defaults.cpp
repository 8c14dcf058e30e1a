#include "commands/upstream_defaults.h"

#include <fmt/core.h>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::commands {

UpstreamPin pinned_upstream() {
  const auto file = bundled_upstream_file();
  const auto text = try_read_file(file);
  if (!text)
    throw Error(fmt::format("{} is missing", file.string()),
                "it names the upstream the patch is made against; restore it from git");
  return parse_upstream_pin(*text, file.string());
}

git::UpstreamRequest with_pinned_defaults(git::UpstreamRequest request) {
  if (!request.upstream.empty() && !request.ref.empty()) return request;
  const UpstreamPin pin = pinned_upstream();
  if (request.upstream.empty()) request.upstream = pin.url;
  if (request.ref.empty()) request.ref = pin.commit;
  return request;
}

}  // namespace apexnpu::commands
