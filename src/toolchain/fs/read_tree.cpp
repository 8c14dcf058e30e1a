// fs::read_tree (declared in tree_io.h): a walk through directory descriptors. Each name is
// opened relative to its directory's descriptor, so no path is resolved from the root again,
// and a file costs one open, one fstat and its reads; the type comes from the directory entry.
// Directories are read by the job pool's threads from one queue (reading a tree is mostly system
// calls, which run side by side), each thread filling a tree of its own; the trees are merged at
// the end. Of several failures, the one at the lowest path is reported, whatever the timing (the
// job pool's rule, with the tree's paths as the order): what is past it is no longer read, what
// is before it still is.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

#include "core/error.h"
#include "core/git_path_rules.h"
#include "core/job_pool.h"
#include "core/relative_path.h"
#include "fs/errno_text.h"
#include "fs/file_io.h"
#include "fs/tree_io.h"
#include "fs/unique_fd.h"

namespace apexnpu::fs {
namespace stdfs = std::filesystem;

namespace {

struct DirCloser {
  void operator()(DIR* dir) const noexcept { ::closedir(dir); }
};
using Dir = std::unique_ptr<DIR, DirCloser>;

// Directories still to read, each open as a descriptor with its path in the tree ("" or ending
// in '/'). The walk is over when the queue is empty and no thread is reading a directory (which
// could add more). After a failure, only what comes before its path is read.
class DirectoryQueue {
 public:
  struct Directory {
    UniqueFd fd;
    std::string prefix;
  };

  void push(Directory dir) {
    const std::lock_guard lock(mutex_);
    pending_.push_back(std::move(dir));
    ready_.notify_one();
  }
  // The next directory to read; false when the walk is over.
  bool pop(Directory& dir) {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [&] { return !pending_.empty() || reading_ == 0; });
      if (pending_.empty()) return false;
      dir = std::move(pending_.back());
      pending_.pop_back();
      if (!past_failure_locked(dir.prefix)) break;
      if (reading_ == 0 && pending_.empty()) ready_.notify_all();
    }
    ++reading_;
    return true;
  }
  void done() {
    const std::lock_guard lock(mutex_);
    if (--reading_ == 0 && pending_.empty()) ready_.notify_all();
  }
  // A failure at `path`: kept if it is the lowest so far.
  void fail(const std::string& path, std::exception_ptr error) {
    const std::lock_guard lock(mutex_);
    if (!error_ || path < error_path_) {
      error_ = std::move(error);
      error_path_ = path;
    }
    failed_ = true;
  }
  // Whether `path` comes after a failure, so that reading it cannot change the outcome.
  bool past_failure(const std::string& path) {
    if (!failed_.load(std::memory_order_relaxed)) return false;
    const std::lock_guard lock(mutex_);
    return past_failure_locked(path);
  }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<Directory> pending_;
  std::size_t reading_ = 0;
  std::exception_ptr error_;
  std::string error_path_;
  std::atomic<bool> failed_{false};

  bool past_failure_locked(const std::string& path) const { return error_ && path > error_path_; }
};

class TreeWalk {
 public:
  TreeWalk(const stdfs::path& root, const std::vector<std::string>& excludes, const FileVisitor& visit,
           const std::vector<std::string>& entered_links)
      : root_(root), excludes_(excludes), visit_(visit), entered_links_(entered_links) {}

  FileTree read() {
    // The root may be a symlink to a directory (a CI checkout, a volume): the user named it, so
    // it is followed; below it no link ever is.
    UniqueFd fd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) {
      if (errno == ENOENT || errno == ENOTDIR)
        throw Error(fmt::format("{} is not a directory", root_.string()));
      throw Error(fmt::format("cannot read {}: {}", root_.string(), errno_text()));
    }
    queue_.push({std::move(fd), ""});
    const std::size_t threads = core::thread_count(core::WorkKind::io);
    std::vector<FileTree> trees(threads);
    core::run_jobs(threads, threads, [&](std::size_t t, std::size_t) { work(trees[t]); });
    queue_.rethrow();
    for (std::size_t t = 1; t < threads; ++t) trees[0].merge(trees[t]);
    return std::move(trees[0]);
  }

 private:
  void work(FileTree& tree) {
    DirectoryQueue::Directory dir;
    while (queue_.pop(dir)) {
      try {
        walk(std::move(dir.fd), dir.prefix, tree);
      } catch (...) {
        queue_.fail(dir.prefix, std::current_exception());
      }
      queue_.done();
    }
  }

  // Reads the directory open as `fd`, whose path in the tree is `prefix` ("" or ending in '/');
  // its subdirectories go to the queue.
  void walk(UniqueFd fd, const std::string& prefix, FileTree& tree) {
    const int dir_fd = fd.get();
    Dir dir(::fdopendir(dir_fd));
    if (!dir) throw Error(fmt::format("cannot read {}: {}", (root_ / prefix).string(), errno_text()));
    (void)fd.release();  // the DIR owns it now
    for (;;) {
      errno = 0;
      const dirent* entry = ::readdir(dir.get());
      if (entry == nullptr) {
        if (errno != 0)
          throw Error(fmt::format("cannot read {}: {}", (root_ / prefix).string(), errno_text()));
        break;
      }
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string rel = prefix + std::string(name);
      if (queue_.past_failure(rel)) continue;
      try {
        take(dir_fd, std::string(name), rel, entry->d_type, tree);
      } catch (...) {
        queue_.fail(rel, std::current_exception());
      }
    }
  }

  void take(int dir_fd, const std::string& name, const std::string& rel, unsigned char type, FileTree& tree) {
    if (is_excluded(rel, excludes_)) return;  // a directory is not entered
    if (type == DT_UNKNOWN) type = type_of(dir_fd, name, rel);
    if (type == DT_LNK && rel == name &&
        std::find(entered_links_.begin(), entered_links_.end(), name) != entered_links_.end()) {
      // Followed this once, as the root is; a link to anything but a directory stays a link.
      UniqueFd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (sub) {
        queue_.push({std::move(sub), rel + '/'});
        return;
      }
    }
    if (type == DT_DIR) {
      UniqueFd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) throw Error(fmt::format("cannot read {}: {}", (root_ / rel).string(), errno_text()));
      queue_.push({std::move(sub), rel + '/'});
      return;
    }
    if (auto reason = unsafe_path_reason(rel); reason || (reason = control_character_reason(rel)))
      throw Error(fmt::format("cannot take {}: {}", printable_path((root_ / rel).string()), *reason));
    if (type == DT_LNK) {
      if (auto reason = git_symlink_reason(name))
        throw Error(fmt::format("cannot take {}: {}", printable_path((root_ / rel).string()), *reason));
      visit(tree.emplace(rel, FileEntry{link_target(dir_fd, name, rel), FileKind::symlink}).first);
    } else if (type == DT_REG) {
      take_file(dir_fd, name, rel, tree);
    } else {
      throw Error(fmt::format("{} is not a regular file, directory or symlink", (root_ / rel).string()),
                  "remove it or leave it out with --exclude");
    }
  }

  void take_file(int dir_fd, const std::string& name, const std::string& rel, FileTree& tree) {
    UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0)
      throw Error(fmt::format("cannot read {}: {}", (root_ / rel).string(), errno_text()), "check the path");
    if (!S_ISREG(st.st_mode))  // replaced since the directory was read
      throw Error(fmt::format("{} is not a regular file", (root_ / rel).string()));
    const bool exec = (st.st_mode & S_IXUSR) != 0;
    visit(tree.emplace(rel, FileEntry{read_all(fd.get(), root_ / rel, static_cast<std::size_t>(st.st_size)),
                                      exec ? FileKind::executable : FileKind::regular})
              .first);
  }

  unsigned char type_of(int dir_fd, const std::string& name, const std::string& rel) const {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      throw Error(fmt::format("cannot read {}: {}", (root_ / rel).string(), errno_text()));
    if (S_ISDIR(st.st_mode)) return DT_DIR;
    if (S_ISLNK(st.st_mode)) return DT_LNK;
    return S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
  }

  std::string link_target(int dir_fd, const std::string& name, const std::string& rel) const {
    std::string target(256, '\0');
    for (;;) {
      const ssize_t n = ::readlinkat(dir_fd, name.c_str(), target.data(), target.size());
      if (n < 0)
        throw Error(fmt::format("cannot read the link {}: {}", (root_ / rel).string(), errno_text()));
      if (static_cast<std::size_t>(n) < target.size()) {
        target.resize(static_cast<std::size_t>(n));
        return target;
      }
      target.resize(target.size() * 2);  // it may have been cut: read it again into more room
    }
  }

  const stdfs::path& root_;
  void visit(FileTree::const_iterator it) const {
    if (visit_) visit_(it->first, it->second);
  }

  const std::vector<std::string>& excludes_;
  const FileVisitor& visit_;
  const std::vector<std::string>& entered_links_;
  DirectoryQueue queue_;
};

}  // namespace

FileTree read_tree(const stdfs::path& root, const std::vector<std::string>& excludes,
                   const FileVisitor& visit, const std::vector<std::string>& entered_links) {
  return TreeWalk(root, excludes, visit, entered_links).read();
}

}  // namespace apexnpu::fs
