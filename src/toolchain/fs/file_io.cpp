#include "fs/file_io.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>

#include "core/error.h"
#include "fs/errno_text.h"
#include "fs/staging.h"
#include "fs/unique_fd.h"

namespace apexnpu {
namespace stdfs = std::filesystem;

namespace {

using fs::errno_text;

void fsync_directory(const stdfs::path& dir) {
  fs::UniqueFd fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) ::fsync(fd.get());
}

// An open regular file (not a symlink, unless `links` follows them), or an invalid fd with
// errno set: EINVAL for something that is not a regular file.
fs::UniqueFd open_regular(const stdfs::path& path, Links links) {
  const int no_follow = links == Links::refuse ? O_NOFOLLOW : 0;
  fs::UniqueFd fd(::open(path.c_str(), O_RDONLY | no_follow | O_CLOEXEC));
  if (!fd) return fd;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    errno = EINVAL;
    return fs::UniqueFd();
  }
  return fd;
}

// The Error for an open_regular that failed with `error` (its errno).
Error open_error(const stdfs::path& path, Links links, int error) {
  if (error == ELOOP && links == Links::refuse)
    return Error(fmt::format("{} is a symlink; refusing to follow it", path.string()));
  if (error == EINVAL) return Error(fmt::format("{} is not a regular file", path.string()));
  return Error(fmt::format("cannot read {}: {}", path.string(), errno_text(error)), "check the path");
}

}  // namespace

std::string read_file(const stdfs::path& path) {
  fs::UniqueFd fd = open_regular(path, Links::refuse);
  if (!fd) throw open_error(path, Links::refuse, errno);
  return fs::read_all(fd.get(), path);
}

std::optional<std::string> try_read_file(const stdfs::path& path, Links links) {
  fs::UniqueFd fd = open_regular(path, links);
  if (!fd) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw open_error(path, links, errno);
  }
  return fs::read_all(fd.get(), path);
}

void write_file_atomic(const stdfs::path& path, std::string_view bytes, stdfs::perms perms,
                       Durability durability) {
  const stdfs::path parent = path.parent_path().empty() ? stdfs::path(".") : path.parent_path();
  fs::StagingFile temp(path);  // removed on any failure; a killed run's is removed by the next
  fs::write_all(temp.fd(), bytes, path);
  ::fchmod(temp.fd(), static_cast<mode_t>(perms));
  if (durability == Durability::synced && ::fsync(temp.fd()) != 0)
    throw Error(fmt::format("cannot write {}: {}", path.string(), errno_text()));
  if (::rename(temp.path().c_str(), path.c_str()) != 0)
    throw Error(fmt::format("cannot write {}: {}", path.string(), errno_text()));
  temp.close_and_keep();
  if (durability == Durability::synced) fsync_directory(parent);
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}-{:x}-{}", ::getpid(), static_cast<unsigned>(::gettid()) & 0xffffff,
                     counter.fetch_add(1));
}

namespace {

// Best effort: never follows symlinks, ignores errors.
void remove_tree_quietly(const stdfs::path& path) noexcept {
  std::error_code ec;
  stdfs::remove_all(path, ec);
}

}  // namespace

TempDir& TempDir::operator=(TempDir&& o) noexcept {
  if (this != &o) {
    if (!path_.empty()) remove_tree_quietly(path_);
    path_ = std::exchange(o.path_, {});
  }
  return *this;
}

TempDir::~TempDir() {
  if (!path_.empty()) remove_tree_quietly(path_);
}

namespace fs {

std::string read_all(int fd, const stdfs::path& path, std::size_t size_hint) {
  // One byte more than the hint, so the read that finds the end needs no room made first.
  std::string bytes(size_hint + 1, '\0');
  std::size_t have = 0;
  for (;;) {
    if (have == bytes.size()) bytes.resize(std::max<std::size_t>(2 * bytes.size(), 1 << 16));
    const ssize_t n = ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("cannot read {}: {}", path.string(), errno_text()));
    }
    have += static_cast<std::size_t>(n);
  }
  bytes.resize(have);
  return bytes;
}

void write_all(int fd, std::string_view bytes, const stdfs::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("cannot write {}: {}", path.string(), errno_text()),
                  "check free space and permissions");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace fs
}  // namespace apexnpu
