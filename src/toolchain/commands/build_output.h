#pragma once
// The build's output directory, filled atomically: everything is written into a staging folder
// beside -o and moved in only when complete. On failure (or any exception) the staging folder
// and any parent folders this build created are removed, so -o is left as it was.
#include <filesystem>
#include <string>
#include <vector>

#include "fs/file_io.h"

namespace apexnpu::commands {

class BuildOutput {
 public:
  // Creates the staging folder; throws Error naming -o when it cannot be written.
  explicit BuildOutput(const std::filesystem::path& out_dir);
  BuildOutput(const BuildOutput&) = delete;
  BuildOutput& operator=(const BuildOutput&) = delete;
  ~BuildOutput();

  // Where to write the item called `name` (a file or folder) before commit.
  std::filesystem::path staged(const std::string& name) const;
  // Scratch space inside the staging folder, never moved into -o.
  std::filesystem::path scratch() const;
  // Moves the named items into -o, replacing same-named ones. Returns their final paths.
  std::vector<std::filesystem::path> commit(const std::vector<std::string>& names);
  const std::filesystem::path& out_dir() const { return out_; }

 private:
  std::filesystem::path out_;
  std::filesystem::path created_ancestor_;  // first folder we created above -o, if any
  TempDir staging_;
  bool committed_ = false;
};

}  // namespace apexnpu::commands
