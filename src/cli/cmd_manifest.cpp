// apexnpu manifest: the version-compatibility matrix, or what goes with one torch version.
#include <fmt/ranges.h>

#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/non_empty.h"
#include "commands/manifest.h"

namespace apexnpu::cli {

namespace {

// The matrix as a table, or one line per matching row.
std::string manifest_text(const commands::ManifestResult& result) {
  if (!result.torch) return manifest::format_table(result.matrix);
  std::string text = fmt::format("PyTorch {}:\n", *result.torch);
  for (const auto& m : result.matches)
    text += fmt::format("  AscendPyTorch {:<8} PyTorch {}{}{}  PyTorch branch {}  Apex branch {}\n",
                        m.ascend_pytorch, m.pytorch, m.beta ? " (beta)" : "",
                        m.exact ? "" : " (pre/post-release)", fmt::join(m.pytorch_branches, ", "),
                        fmt::join(m.apex_branches, ", "));
  return text;
}

}  // namespace

void add_manifest_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto query = std::make_shared<commands::ManifestQuery>();
  auto torch = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("manifest", "Show the AscendPyTorch / PyTorch / Apex compatibility matrix");
  cmd->add_option("--torch", *torch,
                  "Show which AscendPyTorch releases and branches go with this torch version")
      ->check(non_empty());
  cmd->callback([&selected, &console, query, torch] {
    selected.name = "manifest";
    selected.run = [&console, query, torch] {
      if (!torch->empty()) query->torch = *torch;
      const auto result = commands::run_manifest(*query);
      if (!console.json() && !console.quiet()) {
        std::fputs(manifest_text(result).c_str(), stdout);
        std::fflush(stdout);
      }
      return result.to_json();
    };
  });
}

}  // namespace apexnpu::cli
