#include "fs/tree_io.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <system_error>

#include "core/error.h"
#include "core/git_path_rules.h"
#include "core/job_pool.h"
#include "core/relative_path.h"
#include "fs/directory_update.h"
#include "fs/errno_text.h"
#include "fs/file_io.h"
#include "fs/staging.h"
#include "fs/unique_fd.h"

namespace apexnpu::fs {
namespace stdfs = std::filesystem;

namespace {

// Every proper prefix of every path must be a directory in the tree, never a file or a symlink;
// so creating the tree can neither go through a link nor clash with a file.
void check_tree_paths(const FileTree& tree) {
  std::set<std::string> directories;
  for (const auto& [path, entry] : tree) {
    if (auto reason = unsafe_path_reason(path))
      throw Error(fmt::format("refusing to write {}: {}", printable_path(path), *reason));
    if (auto reason = control_character_reason(path))
      throw Error(fmt::format("refusing to write {}: {}", printable_path(path), *reason));
    if (entry.kind == FileKind::symlink)
      if (auto reason = git_symlink_reason(path.substr(path.rfind('/') + 1)))
        throw Error(fmt::format("refusing to write {}: {}", printable_path(path), *reason));
    for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1))
      directories.insert(path.substr(0, slash));
  }
  for (const auto& dir : directories)
    if (tree.contains(dir))
      throw Error(fmt::format("refusing to write {}: it is a file and a directory of the tree", dir));
}

// Creates a tree under a fresh root: every directory first, then the files on a few threads
// (creating files is mostly waiting on the file system, which serves several at once); modes set
// explicitly only when the umask would change them.
class TreeCreator {
 public:
  explicit TreeCreator(stdfs::path root) : root_(std::move(root)) {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    umask_ = mask;
  }

  void create(const FileTree& tree) {
    std::set<std::string> directories;  // sorted: a parent before its children
    std::vector<const FileTree::value_type*> files;
    files.reserve(tree.size());
    for (const auto& item : tree) {
      files.push_back(&item);
      for (std::size_t slash = item.first.find('/'); slash != std::string::npos;
           slash = item.first.find('/', slash + 1))
        directories.insert(item.first.substr(0, slash));
    }
    for (const std::string& dir : directories) {
      const stdfs::path full = root_ / dir;
      if (::mkdir(full.c_str(), 0755) != 0)
        throw Error(fmt::format("cannot create directory {}: {}", full.string(), errno_text()));
    }
    constexpr std::size_t kRun = 8;
    core::run_jobs((files.size() + kRun - 1) / kRun, core::thread_count(core::WorkKind::io),
                   [&](std::size_t run, std::size_t) {
                     for (std::size_t i = run * kRun; i < std::min(files.size(), (run + 1) * kRun); ++i)
                       create_file(files[i]->first, files[i]->second);
                   });
  }

 private:
  void create_file(const std::string& path, const FileEntry& entry) const {
    const stdfs::path full = root_ / path;
    if (entry.kind == FileKind::symlink) {
      if (::symlink(entry.content.c_str(), full.c_str()) != 0)
        throw Error(fmt::format("cannot create symlink {}: {}", full.string(), errno_text()));
      return;
    }
    const mode_t mode = entry.kind == FileKind::executable ? 0755 : 0644;
    UniqueFd fd(::open(full.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd) throw Error(fmt::format("cannot create {}: {}", full.string(), errno_text()));
    write_all(fd.get(), entry.content, full);
    if ((mode & umask_) != 0) ::fchmod(fd.get(), mode);  // the umask must not decide the mode
  }

  stdfs::path root_;
  mode_t umask_ = 022;
};

bool is_empty_directory(const stdfs::path& path) {
  std::error_code ec;
  return stdfs::is_empty(path, ec) && !ec;
}

// Throws unless `target` may be replaced by a directory (absent, an empty directory, or with
// ReplaceMode::replace any directory); returns whether something must be moved aside first.
bool check_target(const stdfs::path& target, ReplaceMode mode) {
  std::error_code ec;
  const auto status = stdfs::symlink_status(target, ec);
  const bool exists = !ec && stdfs::exists(status);
  if (exists && !stdfs::is_directory(status))
    throw Error(fmt::format("{} exists and is not a directory", target.string()),
                "choose another output directory");
  const bool occupied = exists && !is_empty_directory(target);
  if (occupied && mode == ReplaceMode::refuse_non_empty)
    throw Error(fmt::format("the output directory {} is not empty", target.string()),
                "pass --force to replace it");
  return occupied;
}

}  // namespace

const std::vector<std::string>& default_excludes() {
  // Version control, build output, byte code, and what a patch run leaves behind.
  static const std::vector<std::string> patterns = {".git",  "build", "dist",  "*.egg-info", "__pycache__",
                                                    "*.pyc", "*.so",  "*.rej", "*.orig"};
  return patterns;
}

bool is_excluded(std::string_view relative_path, const std::vector<std::string>& patterns) {
  const std::string whole(relative_path);
  for (const std::string& raw : patterns) {
    std::string pattern = raw;
    while (pattern.size() > 1 && pattern.back() == '/') pattern.pop_back();
    if (pattern.find('/') != std::string::npos) {
      // A pattern with a slash matches the whole path, or a leading directory of it.
      if (::fnmatch(pattern.c_str(), whole.c_str(), FNM_PATHNAME) == 0) return true;
      for (std::size_t slash = whole.find('/'); slash != std::string::npos;
           slash = whole.find('/', slash + 1))
        if (::fnmatch(pattern.c_str(), whole.substr(0, slash).c_str(), FNM_PATHNAME) == 0) return true;
      continue;
    }
    std::size_t start = 0;
    while (start <= whole.size()) {
      const std::size_t end = std::min(whole.find('/', start), whole.size());
      if (::fnmatch(pattern.c_str(), whole.substr(start, end - start).c_str(), 0) == 0) return true;
      start = end + 1;
    }
  }
  return false;
}

void create_tree(const FileTree& tree, const stdfs::path& root) {
  check_tree_paths(tree);
  TreeCreator(root).create(tree);
}

StagedTree::StagedTree(const FileTree& tree, stdfs::path target, ReplaceMode mode)
    : target_(std::move(target)), mode_(mode) {
  check_tree_paths(tree);
  check_target(target_, mode_);
  if (is_mount_point(target_)) {
    // No rename replaces a mount point: its entries are replaced instead, together, by a
    // directory update staged inside it (which also finishes what killed runs left there).
    mounted_ = std::make_unique<DirectoryUpdate>(target_);
    TreeCreator(mounted_->staged("")).create(tree);
    for (const auto& [path, entry] : tree) {
      const std::string top = path.substr(0, path.find('/'));
      if (top_level_.empty() || top_level_.back() != top) top_level_.push_back(top);
    }
    top_level_.erase(std::unique(top_level_.begin(), top_level_.end()), top_level_.end());
    return;
  }
  remove_stale_staging(target_);
  staging_ = std::make_unique<StagingDir>(target_);
  ::chmod(staging_->path().c_str(), 0755);
  TreeCreator(staging_->path()).create(tree);
}

void StagedTree::commit_into_mount_point() {
  // What else is in the mount point: in ReplaceMode::replace it goes, with the update; otherwise
  // it must be empty (but for this run's staging), as any other target.
  const std::string ours = staging_prefix(target_);
  std::vector<std::string> drops;
  std::error_code ec;
  for (stdfs::directory_iterator it(target_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with(ours)) continue;
    if (mode_ == ReplaceMode::refuse_non_empty)
      throw Error(fmt::format("the output directory {} is not empty", target_.string()),
                  "pass --force to replace it");
    if (std::find(top_level_.begin(), top_level_.end(), name) == top_level_.end()) drops.push_back(name);
  }
  if (ec) throw Error(fmt::format("cannot read {}: {}", target_.string(), ec.message()));
  mounted_->commit(top_level_, drops);
  mounted_.reset();
}

void StagedTree::commit() {
  if (mounted_) return commit_into_mount_point();
  if (!staging_) throw Error(fmt::format("{} was already put in place", target_.string()));
  const stdfs::path& staged = staging_->path();
  if (!check_target(target_, mode_)) {
    if (::rename(staged.c_str(), target_.c_str()) != 0)
      throw Error(fmt::format("cannot move the output into {}: {}", target_.string(), errno_text()));
    staging_->release();
  } else if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
    // One exchange: the new tree is in place, the old one where the new was, removed with it.
  } else if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) {
    throw Error(fmt::format("cannot move the output into {}: {}", target_.string(), errno_text()));
  } else {
    // No exchange on this file system: old output aside, new one in. Killed between the two,
    // the next run puts the old one back (remove_stale_staging).
    StagingDir aside(target_, StagingKind::aside);
    if (::rename(target_.c_str(), aside.path().c_str()) != 0)
      throw Error(fmt::format("cannot move the old {} aside: {}", target_.string(), errno_text()));
    if (::rename(staged.c_str(), target_.c_str()) != 0) {
      const std::string why = errno_text();
      ::rename(aside.path().c_str(), target_.c_str());
      throw Error(fmt::format("cannot move the output into {}: {}", target_.string(), why));
    }
    staging_->release();
  }
  staging_.reset();
  // No fsync here: the files themselves are not synced either (as git checkout does not); the
  // renames only make the result appear whole or not at all.
}

void write_tree_atomically(const FileTree& tree, const stdfs::path& target, ReplaceMode mode) {
  StagedTree(tree, target, mode).commit();
}

}  // namespace apexnpu::fs
