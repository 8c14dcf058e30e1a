#pragma once
// Shared by the integration tests: temporary directories, running the real apexnpu binary, and
// fixture upstream repositories made with libgit2.
#include <git2.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace apexnpu::test {

namespace stdfs = std::filesystem;

// A fresh directory removed (recursively) when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const stdfs::path& path() const { return path_; }
  stdfs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  stdfs::path path_;
};

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `program args...` with extra environment entries ("NAME=value"), stdin from /dev/null,
// in `cwd` (when not empty); captures stdout and stderr.
RunResult run_process(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& env = {}, const stdfs::path& cwd = {});

// Runs the apexnpu binary under test with HOME/XDG_CACHE_HOME pointed into `home`, so no test
// touches the user's cache.
RunResult run_apexnpu(const std::vector<std::string>& args, const stdfs::path& home,
                      const stdfs::path& cwd = {});

void write_file(const stdfs::path& path, const std::string& bytes, bool executable = false);
std::string read_file(const stdfs::path& path);

// Every file under `root` by relative path: content, or "-> target" for a symlink, plus "*" in
// front for an executable. Directories are implied. Written independently of apexnpu's fs layer.
std::map<std::string, std::string> snapshot(const stdfs::path& root);

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
