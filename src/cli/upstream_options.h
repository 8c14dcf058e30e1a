#pragma once
// The upstream options gen and make-patch share (--upstream, --ref, --offline, --cache-dir), and
// the completion of the request that build's gen step shares too.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/console.h"
#include "git/upstream.h"

namespace apexnpu::cli {

// Registers the options on `cmd`, writing into `request` (kept alive by the caller).
void add_upstream_options(CLI::App& cmd, git::UpstreamRequest& request);

// Completes the request after parsing: clone progress on the console. (An upstream or ref left
// empty means the pinned one, patches/UPSTREAM; the commands fill it in.)
void finish_upstream_request(git::UpstreamRequest& request, Console& console);

}  // namespace apexnpu::cli
