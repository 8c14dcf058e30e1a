#pragma once
// Several entries of one directory replaced together (make-patch's npu.patch and overlay/,
// build's layouts, wheels and manifests, gen's tree on a mount point). They are written into a
// staging directory beside the directory (inside it when it is a mount point, which no rename
// from its parent reaches: fs/staging.h); commit() puts them in place. A directory that does not exist yet
// appears whole with one rename. Into an existing one, commit() first writes a journal naming the entries
// (from then on the new entries win), then moves each old entry aside and the new one in. A run
// killed before the journal leaves the directory as it was; one killed after it is finished by
// the next run that looks (remove_stale_staging), and readers in between see the new entries
// where they wait (committed_entry): the old entries or the new ones, never a mix. Commits and
// their recovery take turns under a lock on the parent directory.
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fs/staging.h"

namespace apexnpu::fs {

class DirectoryUpdate {
 public:
  // Makes the staging beside `dir` (creating missing parent directories, which are removed
  // again if the update is dropped); first finishes or removes what killed runs left there.
  // Throws Error naming `dir` when it exists and is not a directory or cannot be written.
  explicit DirectoryUpdate(const std::filesystem::path& dir);
  ~DirectoryUpdate();
  DirectoryUpdate(const DirectoryUpdate&) = delete;
  DirectoryUpdate& operator=(const DirectoryUpdate&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // Where to write the entry `name` before the commit.
  std::filesystem::path staged(const std::string& name) const;
  // Room for intermediate files, never put in place.
  std::filesystem::path scratch() const;
  // Puts the named staged entries in place together, replacing same-named ones, and takes the
  // entries `drops` out of the directory; returns the final paths of `names`. Throws Error naming
  // what could not be moved, after undoing what was (if even that fails, a later run finishes
  // the update or undoes it).
  std::vector<std::filesystem::path> commit(const std::vector<std::string>& names,
                                            const std::vector<std::string>& drops = {});

 private:
  std::filesystem::path dir_;
  std::filesystem::path created_ancestor_;  // the outermost parent directory this update made
  std::unique_ptr<StagingDir> staging_;
  bool committed_ = false;
};

// Where the committed content of `entry` (a path dir/name) is while a killed update of dir has
// not been finished: the staged copy still waiting in its staging, or `entry` itself.
std::filesystem::path committed_entry(const std::filesystem::path& entry);

// For remove_stale_staging: finishes every committed update among the stale staging entries
// beside `dir` (oldest journal first).
void finish_committed_updates(const std::filesystem::path& dir,
                              const std::vector<std::pair<std::filesystem::path, StagingKind>>& stale);

}  // namespace apexnpu::fs
