#include "cli/upstream_options.h"

namespace apexnpu::cli {

void add_upstream_options(CLI::App& cmd, git::UpstreamRequest& request) {
  cmd.add_option("--upstream", request.upstream,
                 "Upstream Apex: a local repository path (read in place), a file:// or remote URL")
      ->envname("APEXNPU_UPSTREAM")
      ->default_str("the url in patches/UPSTREAM");
  cmd.add_option("--ref", request.ref, "Branch, tag or commit (full or short sha)")
      ->default_str("the commit in patches/UPSTREAM");
  cmd.add_flag("--offline", request.offline, "Use the cache only; never touch the network");
  cmd.add_option("--cache-dir", request.cache_dir,
                 "Clone cache (default: $XDG_CACHE_HOME/apexnpu, else ~/.cache/apexnpu)");
}

void finish_upstream_request(git::UpstreamRequest& request, Console& console) {
  request.on_progress = [&console](const git::TransferProgress& p) {
    console.progress("fetching", p.received_objects, p.total_objects);
  };
}

}  // namespace apexnpu::cli
