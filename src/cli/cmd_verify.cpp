// apexnpu verify: check a wheel or wheel layout against RECORD and the wheel format.
#include <memory>

#include "cli/commands.h"
#include "cli/non_empty.h"
#include "commands/verify.h"

namespace apexnpu::cli {

void add_verify_command(CLI::App& app, Console& console, CommandRunner& selected) {
  auto path = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "verify", "Check a .whl or wheel layout directory (RECORD hashes and sizes, names, tags)");
  cmd->add_option("PATH", *path, "A .whl file or a wheel layout directory")->check(non_empty())->required();
  cmd->callback([&selected, &console, path] {
    selected.name = "verify";
    selected.run = [&console, path] {
      const auto result = commands::run_verify(*path);
      console.info("{}: ok ({} files, {})", *path, result.files, result.dist_info);
      return result.to_json();
    };
  });
}

}  // namespace apexnpu::cli
