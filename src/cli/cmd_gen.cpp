// apexnpu gen: upstream Apex + npu.patch + overlay -> a patched tree.
#include <memory>

#include "cli/commands.h"
#include "cli/non_empty.h"
#include "cli/upstream_options.h"
#include "commands/gen.h"

namespace apexnpu::cli {

namespace {

void print_gen_result(Console& console, const commands::GenResult& result) {
  for (const auto& file : result.files) {
    const std::string_view status = commands::status_name(file);
    std::string detail;
    for (const auto& h : file.hunks) {
      if (h.offset != 0) detail += fmt::format(" offset {}", h.offset);
      if (h.fuzz != 0) detail += fmt::format(" fuzz {}", h.fuzz);
    }
    const std::string painted = status == "clean" ? console.green(status) : console.yellow(status);
    console.info("  {:<7} {} {}{}", painted, commands::operation_name(file), file.path, detail);
  }
  console.info("{} {} files from {} at {} ({} patched, {} from the overlay){}",
               result.check ? "checked" : "generated", result.tree_files, result.upstream.url,
               result.upstream.commit.substr(0, 12), result.files.size(), result.overlay_files.size(),
               result.output ? " -> " + result.output->string() : "");
}

}  // namespace

void add_gen_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto opts = std::make_shared<commands::GenOptions>();
  auto* cmd = app.add_subcommand("gen", "Apply npu.patch and the overlay to upstream Apex");
  add_upstream_options(*cmd, opts->upstream);
  cmd->add_option("--patch", opts->patch_file, "The patch to apply (default: the bundled npu.patch)")
      ->check(non_empty());
  auto* overlay =
      cmd->add_option("--overlay", opts->overlay_dir, "Whole files to add (default: the bundled overlay)")
          ->check(non_empty());
  cmd->add_flag("--no-overlay", opts->no_overlay, "Apply the patch alone")->excludes(overlay);
  cmd->add_option("-o,--output", opts->output, "Output directory (default: ./apex)")->check(non_empty());
  cmd->add_flag("--force", opts->force, "Replace a non-empty output directory");
  auto* check = cmd->add_flag("--check", opts->check, "Apply in memory and report; write nothing");
  cmd->add_flag("--keep-rejects", opts->keep_rejects,
                "When hunks fail, write the tree anyway: what applied, and each file's failed "
                "hunks in <file>.rej beside it (exit 1); for moving to a new upstream commit")
      ->excludes(check);
  cmd->callback([&selected, &console, opts] {
    selected.name = "gen";
    selected.run = [&console, opts] {
      finish_upstream_request(opts->upstream, console);
      commands::GenCallbacks callbacks;
      callbacks.detail = console.detail_sink();
      const auto result = commands::run_gen(*opts, callbacks);
      console.end_progress();
      print_gen_result(console, result);
      return result.to_json();
    };
  });
}

}  // namespace apexnpu::cli
