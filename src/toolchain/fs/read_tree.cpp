// fs::read_tree (declared in tree_io.h): a walk through directory descriptors. Each name is
// opened relative to its directory's descriptor, so no path is resolved from the root again,
// and a file costs one open, one fstat and its reads; the type comes from the directory entry.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/relative_path.h"
#include "fs/file_io.h"
#include "fs/tree_io.h"
#include "fs/unique_fd.h"

namespace apexnpu::fs {
namespace stdfs = std::filesystem;

namespace {

std::string errno_text() { return std::strerror(errno); }

struct DirCloser {
  void operator()(DIR* dir) const noexcept { ::closedir(dir); }
};
using Dir = std::unique_ptr<DIR, DirCloser>;

class TreeWalk {
 public:
  TreeWalk(const stdfs::path& root, const std::vector<std::string>& excludes)
      : root_(root), excludes_(excludes) {}

  FileTree read() {
    UniqueFd fd(::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
        throw Error(fmt::format("{} is not a directory", root_.string()));
      throw Error(fmt::format("cannot read {}: {}", root_.string(), errno_text()));
    }
    walk(std::move(fd), "");
    return std::move(tree_);
  }

 private:
  // Reads the directory open as `fd`, whose path in the tree is `prefix` ("" or ending in '/').
  void walk(UniqueFd fd, const std::string& prefix) {
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
      take(dir_fd, std::string(name), prefix + std::string(name), entry->d_type);
    }
  }

  void take(int dir_fd, const std::string& name, const std::string& rel, unsigned char type) {
    if (is_excluded(rel, excludes_)) return;  // a directory is not entered
    if (type == DT_UNKNOWN) type = type_of(dir_fd, name, rel);
    if (type == DT_DIR) {
      UniqueFd sub(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) throw Error(fmt::format("cannot read {}: {}", (root_ / rel).string(), errno_text()));
      walk(std::move(sub), rel + '/');
      return;
    }
    if (auto reason = unsafe_path_reason(rel))
      throw Error(fmt::format("cannot take {}: {}", (root_ / rel).string(), *reason));
    if (type == DT_LNK) {
      tree_.emplace(rel, FileEntry{link_target(dir_fd, name, rel), FileKind::symlink});
    } else if (type == DT_REG) {
      take_file(dir_fd, name, rel);
    } else {
      throw Error(fmt::format("{} is not a regular file, directory or symlink", (root_ / rel).string()),
                  "remove it or leave it out with --exclude");
    }
  }

  void take_file(int dir_fd, const std::string& name, const std::string& rel) {
    UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0)
      throw Error(fmt::format("cannot read {}: {}", (root_ / rel).string(), errno_text()), "check the path");
    if (!S_ISREG(st.st_mode))  // replaced since the directory was read
      throw Error(fmt::format("{} is not a regular file", (root_ / rel).string()));
    const bool exec = (st.st_mode & S_IXUSR) != 0;
    tree_.emplace(rel, FileEntry{read_all(fd.get(), root_ / rel, static_cast<std::size_t>(st.st_size)),
                                 exec ? FileKind::executable : FileKind::regular});
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
  const std::vector<std::string>& excludes_;
  FileTree tree_;
};

}  // namespace

FileTree read_tree(const stdfs::path& root, const std::vector<std::string>& excludes) {
  return TreeWalk(root, excludes).read();
}

}  // namespace apexnpu::fs
