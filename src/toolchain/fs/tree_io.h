#pragma once
// The file system edge of the toolchain: reading a directory into a FileTree and writing a
// FileTree out, safely (no symlink is followed, nothing escapes the target) and atomically
// (built beside the target, renamed into place only when complete).
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_tree.h"
#include "fs/directory_update.h"
#include "fs/staging.h"

namespace apexnpu::fs {

// Patterns make-patch leaves out by default (fnmatch globs on path components or whole paths).
const std::vector<std::string>& default_excludes();

// Whether a relative path is left out by the patterns: a pattern matches (fnmatch) any single
// component of the path, or the whole path.
bool is_excluded(std::string_view relative_path, const std::vector<std::string>& patterns);

// Called with each file as soon as it is read, on the thread that read it (several at once):
// work on the bytes while they are in cache. The entry stays where it is in the returned tree.
using FileVisitor = std::function<void(const std::string& path, const FileEntry& entry)>;

// Reads every file under `root` (regular files, executables, symlinks recorded as symlinks,
// never followed; `root` itself may be a symlink to a directory). Paths matching an exclude
// pattern are skipped (whole directories pruned). A top-level symlink named in `entered_links`
// that points to a directory is read through as that directory (apex/ kept on a volume).
FileTree read_tree(const std::filesystem::path& root, const std::vector<std::string>& excludes = {},
                   const FileVisitor& visit = {}, const std::vector<std::string>& entered_links = {});

enum class ReplaceMode { refuse_non_empty, replace };

// Writes `tree` as the directory `target`: into a staging directory beside it, then renamed
// into place. An existing empty directory is replaced; a non-empty one only with
// ReplaceMode::replace, by one exchange of the two directories (renameat2 RENAME_EXCHANGE), so
// `target` is the old tree or the new one at every instant; where the file system cannot
// exchange, the old tree is moved aside first and a run killed between the two renames has it
// put back by the next run. On any error the staging is removed and `target` is left as it was;
// what a killed run left beside `target` is removed by the next (fs/staging.h).
// A `target` that is a mount point (a container volume) cannot be renamed or exchanged: its
// entries are replaced together instead by a DirectoryUpdate staged inside it
// (fs/directory_update.h): a reader sees each entry old or new, whole, and a run killed while
// moving them is finished (or undone) by the next.
void write_tree_atomically(const FileTree& tree, const std::filesystem::path& target, ReplaceMode mode);

// write_tree_atomically in two steps, so a tree can be written while other work that may still
// fail goes on: the constructor writes it beside `target` (and checks `target` as the rename
// will), commit() puts it in place. Destroyed uncommitted, the written tree is removed.
class StagedTree {
 public:
  StagedTree(const FileTree& tree, std::filesystem::path target, ReplaceMode mode);
  void commit();

 private:
  void commit_into_mount_point();

  std::filesystem::path target_;
  ReplaceMode mode_;
  std::unique_ptr<StagingDir> staging_;
  std::unique_ptr<DirectoryUpdate> mounted_;  // when target_ is a mount point
  std::vector<std::string> top_level_;        // the tree's top-level names, for mounted_
};

// Writes `tree` into `root`, an empty directory this process just made (a staging directory):
// every path checked to stay inside it, no link followed.
void create_tree(const FileTree& tree, const std::filesystem::path& root);

// (Whole files: fs/file_io.h.)

}  // namespace apexnpu::fs
