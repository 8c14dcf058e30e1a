#include "commands/build_output.h"

#include <fmt/core.h>

#include "core/error.h"

namespace apexnpu::commands {

namespace {

fs::DirectoryUpdate open_update(const std::filesystem::path& out_dir) {
  try {
    return fs::DirectoryUpdate(out_dir);
  } catch (const Error& e) {
    throw Error(fmt::format("-o {}: cannot write the output directory ({})", out_dir.string(), e.what()),
                "pass -o with a directory you can write");
  }
}

}  // namespace

BuildOutput::BuildOutput(const std::filesystem::path& out_dir) : update_(open_update(out_dir)) {}

std::vector<std::filesystem::path> BuildOutput::commit(const std::vector<std::string>& names) {
  try {
    return update_.commit(names);
  } catch (const Error& e) {
    // The update's own hint says whether -o was left as it was or what the next run does.
    throw Error(fmt::format("-o {}: cannot put the build in place ({})", update_.dir().string(), e.what()),
                e.hint());
  }
}

}  // namespace apexnpu::commands
