#include "cli/upstream_options.h"

#include "cli/non_empty.h"

namespace apexnpu::cli {

void add_upstream_options(CLI::App& cmd, git::UpstreamRequest& request, UpstreamUse use) {
  const bool gen_step = use == UpstreamUse::build_gen_step;
  const std::string when = gen_step ? "Without --tree, for gen: " : "";
  cmd.add_option("--upstream", request.upstream,
                 when +
                     "Upstream Apex: a local repository path (read in place), a file:// or "
                     "remote URL")
      ->check(non_empty())
      ->envname("APEXNPU_UPSTREAM")
      ->default_str("the url in patches/UPSTREAM");
  cmd.add_option("--ref", request.ref, when + "Branch, tag or commit (full or short sha)")
      ->check(non_empty())
      ->default_str("the commit in patches/UPSTREAM");
  cmd.add_flag("--offline", request.offline, when + "Use the clone cache only; never touch the network");
  // --cache-dir stays the clone cache's other name where it always meant that.
  cmd.add_option(gen_step ? "--clone-cache" : "--clone-cache,--cache-dir", request.cache_dir,
                 when +
                     "Where remote and file:// upstreams are cloned (default: "
                     "$XDG_CACHE_HOME/apexnpu, else ~/.cache/apexnpu)")
      ->check(non_empty())
      ->type_name("DIR");
}

void finish_upstream_request(git::UpstreamRequest& request, Console& console) {
  request.on_progress = [&console](const git::TransferProgress& p) {
    console.progress("fetching", p.received_objects, p.total_objects);
  };
}

}  // namespace apexnpu::cli
