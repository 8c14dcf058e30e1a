// apexnpu make-patch: an edited Apex tree -> npu.patch + overlay/.
#include <memory>

#include "cli/commands.h"
#include "cli/non_empty.h"
#include "cli/upstream_options.h"
#include "commands/make_patch.h"

namespace apexnpu::cli {

void add_make_patch_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto opts = std::make_shared<commands::MakePatchOptions>();
  auto* cmd =
      app.add_subcommand("make-patch", "Regenerate npu.patch and the overlay from an edited Apex tree");
  add_upstream_options(*cmd, opts->upstream);
  cmd->add_option("--tree", opts->tree, "The edited Apex tree")->check(non_empty())->required();
  cmd->add_option("-o,--output", opts->output,
                  "Where npu.patch and overlay/ are written (default: ./patches)")
      ->check(non_empty());
  cmd->add_option("--exclude", opts->excludes,
                  "Also leave out paths matching this glob (repeatable); .git, build, dist, "
                  "*.egg-info, __pycache__, *.pyc and *.so are always left out")
      ->check(non_empty());
  cmd->callback([&selected, &console, opts] {
    selected.name = "make-patch";
    selected.run = [&console, opts] {
      finish_upstream_request(opts->upstream, console);
      commands::MakePatchCallbacks callbacks;
      callbacks.detail = console.detail_sink();
      const auto result = commands::run_make_patch(*opts, callbacks);
      console.end_progress();
      console.info("{}: {} changed, {} deleted; {}: {} files", result.patch.string(), result.changed.size(),
                   result.deleted.size(), result.overlay.string(), result.overlay_files.size());
      return result.to_json();
    };
  });
}

}  // namespace apexnpu::cli
