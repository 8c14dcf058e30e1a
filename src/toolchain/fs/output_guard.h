#pragma once
// Outputs never touch inputs: a command refuses an output path that is one of the paths it
// reads, holds one of them, or lies inside one, before it writes anything. Replacing such an
// output (gen --force) would delete what is being read; writing into it would change it.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::fs {

// A file or directory a command reads, with how the user knows it ("the upstream repository",
// "--tree").
struct ReadPath {
  std::filesystem::path path;
  std::string role;
};

// Throws UsageError naming `option` (e.g. "-o") and the input when `output` is, contains or lies
// inside one of `inputs`. Both sides are compared with symlinks resolved, so another spelling of
// the same directory is caught too.
void refuse_output_over_inputs(const std::filesystem::path& output, std::string_view option,
                               const std::vector<ReadPath>& inputs);

}  // namespace apexnpu::fs
