#pragma once
// Work in progress beside an output: .<output name>.apexnpu-staging-<pid>-<random> (a directory
// or a file), created by this process and locked (flock) while it lives. Beside means in the
// output's parent, or inside the output when that is a mount point (staging_home). A later run tells what
// a killed run left (lock free, its process gone) from what a live run is writing, and removes
// only the former: nothing of apexnpu's outlives the run that made it for longer than the next
// run on the same output.
#include <filesystem>
#include <string>
#include <string_view>

#include "fs/unique_fd.h"

namespace apexnpu::fs {

// What a staging entry beside an output holds: new content on its way in, or the old output
// moved aside while the new one takes its place.
enum class StagingKind { staging, aside };

class StagingDir {
 public:
  // Creates and locks a fresh directory beside `target`; throws Error naming the target when
  // its parent cannot be written.
  explicit StagingDir(const std::filesystem::path& target, StagingKind kind = StagingKind::staging);
  ~StagingDir();  // removes the directory unless released
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The directory was renamed into place (or is removed by someone else): leave it.
  void release();

 private:
  std::filesystem::path path_;
  UniqueFd lock_;
};

// A staging file beside `target`, created and locked; the caller writes it through fd() and
// renames it into place (or the destructor removes it).
class StagingFile {
 public:
  explicit StagingFile(const std::filesystem::path& target);
  ~StagingFile();
  StagingFile(const StagingFile&) = delete;
  StagingFile& operator=(const StagingFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int fd() const { return fd_.get(); }
  void close_and_keep();  // after it was renamed into place

 private:
  std::filesystem::path path_;
  UniqueFd fd_;
};

// The prefix of every staging name beside `target`: ".<name>.apexnpu-".
std::string staging_prefix(const std::filesystem::path& target);

// Whether `path` is a directory on which a file system is mounted (a container volume, a tmpfs):
// nothing can be renamed onto it or into it from its parent, which is another file system.
bool is_mount_point(const std::filesystem::path& path);

// Where the staging of `target` lives: beside it, in its parent; or inside it when `target` is a
// mount point, the one place from which a rename reaches its entries.
std::filesystem::path staging_home(const std::filesystem::path& target);

// Removes what killed runs left beside `target` or inside it (staging entries whose lock is
// free and whose process is gone): an aside directory goes back in place when `target` is
// missing (the run was killed between its two renames); a committed directory update is
// finished first (directory_update.h), or undone when it cannot be. Each entry is handled on its
// own, so one that cannot be finished never keeps the others: it tidies, it never fails the
// command.
void remove_stale_staging(const std::filesystem::path& target) noexcept;

}  // namespace apexnpu::fs
