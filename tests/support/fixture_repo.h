#pragma once
// A work-tree git repository built with libgit2 by the tests, for use as an upstream.
#include <git2.h>

#include "support/test_support.h"

namespace apexnpu::test {

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
