#pragma once
// An exclusive flock held for a scope, so that apexnpu processes sharing the clone cache take
// turns cloning and fetching.
#include <filesystem>

#include "fs/unique_fd.h"

namespace apexnpu::git {

class CacheLock {
 public:
  explicit CacheLock(const std::filesystem::path& lock_file);  // blocks until acquired
  ~CacheLock();
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  fs::UniqueFd fd_;
};

}  // namespace apexnpu::git
