#include "fs/staging.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "core/error.h"
#include "fs/directory_update.h"
#include "fs/parent_dir.h"

namespace apexnpu::fs {
namespace stdfs = std::filesystem;

namespace {

std::string_view kind_name(StagingKind kind) { return kind == StagingKind::aside ? "aside" : "staging"; }

// <home>/.<name>.apexnpu-<kind>-<pid>-XXXXXX, a pattern for mkdtemp / mkostemp.
std::string pattern_beside(const stdfs::path& target, StagingKind kind) {
  // The old output moved aside must leave the mount point, so an aside is always in the parent
  // (where no rename can reach a mount point anyway: StagedTree never asks for one there).
  const stdfs::path home = kind == StagingKind::aside ? parent_of(target) : staging_home(target);
  return (home / fmt::format("{}{}-{}-XXXXXX", staging_prefix(target), kind_name(kind), ::getpid())).string();
}

// An exclusive lock on the open file, held until the descriptor closes (at exit at the latest).
void lock(int fd) {
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
}

// Whether the entry at `path` was left by a process that is gone: its pid (in its name) no
// longer runs and nobody holds its lock. Both, so that neither a live process that has not yet
// taken its lock nor a lock holder in another pid namespace loses its work.
bool is_stale(const stdfs::path& path, std::string_view pid_text) {
  const long pid = std::strtol(std::string(pid_text).c_str(), nullptr, 10);
  if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) return false;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return false;
  return ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
}

}  // namespace

std::string staging_prefix(const stdfs::path& target) {
  return fmt::format(".{}.apexnpu-", target.filename().string());
}

bool is_mount_point(const stdfs::path& path) {
  struct statx self {
  }, parent{};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &self) != 0 ||
      !S_ISDIR(self.stx_mode))
    return false;
  if ((self.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0)  // bind mounts of one device too
    return (self.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  const stdfs::path up = stdfs::absolute(path).lexically_normal().parent_path();
  if (::statx(AT_FDCWD, up.c_str(), 0, STATX_BASIC_STATS, &parent) != 0) return false;
  return self.stx_dev_major != parent.stx_dev_major || self.stx_dev_minor != parent.stx_dev_minor;
}

stdfs::path staging_home(const stdfs::path& target) {
  return is_mount_point(target) ? target : parent_of(target);
}

StagingDir::StagingDir(const stdfs::path& target, StagingKind kind) {
  std::string pattern = pattern_beside(target, kind);
  if (::mkdtemp(pattern.data()) == nullptr)
    throw Error(
        fmt::format("cannot create a staging directory beside {}: {}", target.string(), std::strerror(errno)),
        "check that the directory exists and is writable");
  path_ = pattern;
  lock_ = UniqueFd(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (lock_) lock(lock_.get());
}

StagingDir::~StagingDir() {
  if (path_.empty()) return;
  std::error_code ec;
  stdfs::remove_all(path_, ec);  // never follows symlinks
}

void StagingDir::release() { path_.clear(); }

StagingFile::StagingFile(const stdfs::path& target) {
  std::string pattern = pattern_beside(target, StagingKind::staging);
  fd_ = UniqueFd(::mkostemp(pattern.data(), O_CLOEXEC));
  if (!fd_)
    throw Error(fmt::format("cannot write {}: {}", target.string(), std::strerror(errno)),
                "check that the directory exists and is writable");
  path_ = pattern;
  lock(fd_.get());
}

StagingFile::~StagingFile() {
  if (!path_.empty()) ::unlink(path_.c_str());
}

void StagingFile::close_and_keep() {
  fd_.reset();
  path_.clear();
}

namespace {

// The staging entries of dead runs, in the parent of `target` and inside it.
std::vector<std::pair<stdfs::path, StagingKind>> stale_staging(const stdfs::path& target) {
  const std::string prefix = staging_prefix(target);
  std::vector<std::pair<stdfs::path, StagingKind>> stale;
  std::error_code ec;
  std::vector<stdfs::path> homes{parent_of(target)};
  // A run that found `target` a mount point staged inside it.
  if (stdfs::is_directory(stdfs::symlink_status(target, ec))) homes.push_back(target);
  for (const stdfs::path& home : homes)
    for (stdfs::directory_iterator it(home, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (!name.starts_with(prefix)) continue;
      std::string_view rest = std::string_view(name).substr(prefix.size());
      StagingKind kind;
      if (rest.starts_with("staging-"))
        kind = StagingKind::staging;
      else if (rest.starts_with("aside-"))
        kind = StagingKind::aside;
      else
        continue;
      rest.remove_prefix(rest.find('-') + 1);
      if (is_stale(it->path(), rest.substr(0, rest.find('-')))) stale.emplace_back(it->path(), kind);
    }
  return stale;
}

}  // namespace

void remove_stale_staging(const stdfs::path& target) noexcept {
  std::vector<std::pair<stdfs::path, StagingKind>> stale;
  try {
    stale = stale_staging(target);
    // Committed updates first, oldest first; each finished or undone on its own.
    finish_committed_updates(target, stale);
  } catch (...) {
    // Tidying only: what could not be looked at or finished is still removed below.
  }
  for (const auto& [path, kind] : stale) {
    std::error_code ignored;
    if (!stdfs::exists(stdfs::symlink_status(path, ignored))) continue;
    if (kind == StagingKind::aside && !stdfs::exists(stdfs::symlink_status(target, ignored))) {
      stdfs::rename(path, target, ignored);
      if (!ignored) continue;
    }
    stdfs::remove_all(path, ignored);
  }
}

}  // namespace apexnpu::fs
