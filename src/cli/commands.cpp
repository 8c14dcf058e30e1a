#include "cli/commands.h"

#include <vector>

namespace apexnpu::cli {

// One adder per cmd_*.cpp: declare it here and list it below.
void add_gen_command(CLI::App&, Console&, CommandRunner&);
void add_make_patch_command(CLI::App&, Console&, CommandRunner&);
void add_build_command(CLI::App&, Console&, CommandRunner&);
void add_verify_command(CLI::App&, Console&, CommandRunner&);
void add_manifest_command(CLI::App&, Console&, CommandRunner&);

std::span<const CommandAdder> all_commands() {
  static const std::vector<CommandAdder> adders = {
      add_gen_command, add_make_patch_command, add_build_command, add_verify_command, add_manifest_command,
  };
  return adders;
}

}  // namespace apexnpu::cli
