#pragma once
// What the integration tests add to the shared helpers: running the apexnpu binary under test,
// and fixture upstream repositories made with libgit2.
#include <git2.h>

#include "support/test_support.h"

namespace apexnpu::test {

// Runs the apexnpu binary under test with HOME/XDG_CACHE_HOME pointed into `home`, so no test
// touches the user's cache.
RunResult run_apexnpu(const std::vector<std::string>& args, const stdfs::path& home,
                      const stdfs::path& cwd = {});

// A work-tree git repository built with libgit2, for use as an upstream.
class FixtureRepo {
 public:
  explicit FixtureRepo(const stdfs::path& dir);
  ~FixtureRepo();
  FixtureRepo(const FixtureRepo&) = delete;
  FixtureRepo& operator=(const FixtureRepo&) = delete;

  const stdfs::path& dir() const { return dir_; }
  std::string url() const { return "file://" + dir_.string(); }

  void write(const std::string& path, const std::string& bytes, bool executable = false);
  void symlink(const std::string& path, const std::string& target);
  void remove(const std::string& path);
  // Commits the whole work tree (all files added, removed files dropped); returns the sha.
  std::string commit(const std::string& message);
  void tag(const std::string& name, const std::string& sha, bool annotated);
  void branch(const std::string& name, const std::string& sha);

 private:
  stdfs::path dir_;
  git_repository* repo_ = nullptr;
  int commits_ = 0;
};

}  // namespace apexnpu::test
