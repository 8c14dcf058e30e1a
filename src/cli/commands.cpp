#include "cli/commands.h"

#include <vector>

namespace apexnpu::cli {

// One adder per cmd_*.cpp: declare it here and list it below.

std::span<const CommandAdder> all_commands() {
  static const std::vector<CommandAdder> adders = {};
  return adders;
}

}  // namespace apexnpu::cli
