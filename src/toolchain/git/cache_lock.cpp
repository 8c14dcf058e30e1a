#include "git/cache_lock.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace apexnpu::git {

CacheLock::CacheLock(const std::filesystem::path& lock_file)
    : fd_(::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) {
  if (!fd_)
    throw Error(fmt::format("cannot open the cache lock {}: {}", lock_file.string(), std::strerror(errno)),
                "check that the cache directory is writable, or pass --clone-cache DIR");
  while (::flock(fd_.get(), LOCK_EX) != 0) {
    if (errno != EINTR)
      throw Error(fmt::format("cannot lock {}: {}", lock_file.string(), std::strerror(errno)));
  }
}

CacheLock::~CacheLock() {
  if (fd_) ::flock(fd_.get(), LOCK_UN);
}

}  // namespace apexnpu::git
