// apexnpu gen: upstream Apex + npu.patch + overlay -> a patched tree.
#include <memory>

#include "cli/commands.h"
#include "cli/upstream_options.h"
#include "commands/gen.h"

namespace apexnpu::cli {

namespace {

void print_gen_result(Console& console, const nlohmann::json& result) {
  for (const auto& file : result["files"]) {
    const std::string status = file["status"];
    std::string detail;
    for (const auto& h : file["hunks"]) {
      if (h["offset"].get<long long>() != 0)
        detail += fmt::format(" offset {}", h["offset"].get<long long>());
      if (h["fuzz"].get<int>() != 0) detail += fmt::format(" fuzz {}", h["fuzz"].get<int>());
    }
    const std::string painted = status == "clean" ? console.green(status) : console.yellow(status);
    console.info("  {:<7} {} {}{}", painted, file["operation"].get<std::string>(),
                 file["path"].get<std::string>(), detail);
  }
  const auto& upstream = result["upstream"];
  console.info("{} {} files from {} at {} ({} patched, {} from the overlay){}",
               result["check"].get<bool>() ? "checked" : "generated",
               result["tree_files"].get<std::size_t>(), upstream["url"].get<std::string>(),
               upstream["commit"].get<std::string>().substr(0, 12), result["files"].size(),
               result["overlay_files"].size(),
               result.contains("output") ? " -> " + result["output"].get<std::string>() : "");
}

}  // namespace

void add_gen_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto opts = std::make_shared<commands::GenOptions>();
  auto* cmd = app.add_subcommand("gen", "Apply npu.patch and the overlay to upstream Apex");
  add_upstream_options(*cmd, opts->upstream);
  cmd->add_option("--patch", opts->patch_file, "The patch to apply (default: the bundled npu.patch)");
  auto* overlay = cmd->add_option("--overlay", opts->overlay_dir,
                                  "Whole files to add (default: the bundled overlay)");
  cmd->add_flag("--no-overlay", opts->no_overlay, "Apply the patch alone")->excludes(overlay);
  cmd->add_option("-o,--output", opts->output, "Output directory (default: ./apex)");
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
      nlohmann::json result = commands::run_gen(*opts, callbacks);
      console.end_progress();
      print_gen_result(console, result);
      return result;
    };
  });
}

}  // namespace apexnpu::cli
