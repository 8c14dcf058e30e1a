// apexnpu manifest: the version-compatibility matrix, or what goes with one torch version.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "commands/manifest.h"

namespace apexnpu::cli {

void add_manifest_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto query = std::make_shared<commands::ManifestQuery>();
  auto torch = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("manifest", "Show the AscendPyTorch / PyTorch / Apex compatibility matrix");
  cmd->add_option("--torch", *torch, "Show which AscendPyTorch releases and branches go with this torch version");
  cmd->callback([&selected, &console, query, torch] {
    selected.name = "manifest";
    selected.run = [&console, query, torch] {
      if (!torch->empty()) query->torch = *torch;
      auto out = commands::run_manifest(*query);
      if (!console.json() && !console.quiet()) {
        std::fputs(out.text.c_str(), stdout);
        std::fflush(stdout);
      }
      return out.json;
    };
  });
}

}  // namespace apexnpu::cli
