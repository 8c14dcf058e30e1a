#pragma once
// The build's output directory, filled atomically (fs/directory_update.h): everything is
// written into a staging folder beside -o and put in place together when complete; a build
// killed before that leaves -o as it was, one killed while putting it in place is finished by
// the next build into -o. On failure (or any exception) the staging folder and any parent
// folders this build created are removed.
#include <filesystem>
#include <string>
#include <vector>

#include "fs/directory_update.h"

namespace apexnpu::commands {

class BuildOutput {
 public:
  // Creates the staging folder; throws Error naming -o when it cannot be written.
  explicit BuildOutput(const std::filesystem::path& out_dir);

  // Where to write the item called `name` (a file or folder) before commit.
  std::filesystem::path staged(const std::string& name) const { return update_.staged(name); }
  // Scratch space inside the staging folder, never moved into -o.
  std::filesystem::path scratch() const { return update_.scratch(); }
  // Moves the named items into -o together, replacing same-named ones. Returns their final paths.
  std::vector<std::filesystem::path> commit(const std::vector<std::string>& names);
  const std::filesystem::path& out_dir() const { return update_.dir(); }

 private:
  fs::DirectoryUpdate update_;
};

}  // namespace apexnpu::commands
