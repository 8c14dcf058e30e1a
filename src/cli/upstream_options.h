#pragma once
// The upstream options gen, make-patch and build's gen step share (--upstream, --ref, --offline,
// --clone-cache), and the completion of the request after parsing.
#include <CLI/CLI.hpp>
#include <memory>

#include "cli/console.h"
#include "git/upstream.h"

namespace apexnpu::cli {

// Who reads the upstream: the command itself (gen, make-patch), or build's gen step, which runs
// only without --tree. There --cache-dir is not the clone cache's other name: on build it was
// the object cache (see cmd_build.cpp).
enum class UpstreamUse { command, build_gen_step };

// Registers the options on `cmd`, writing into `request` (kept alive by the caller).
void add_upstream_options(CLI::App& cmd, git::UpstreamRequest& request,
                          UpstreamUse use = UpstreamUse::command);

// Completes the request after parsing: clone progress on the console. (An upstream or ref left
// empty means the pinned one, patches/UPSTREAM; the commands fill it in.)
void finish_upstream_request(git::UpstreamRequest& request, Console& console);

}  // namespace apexnpu::cli
