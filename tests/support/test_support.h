#pragma once
// Helpers every test folder shares: temporary directories, running a program, reading and
// writing files, and a snapshot of a directory written independently of apexnpu's fs layer.
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

void write_file(const stdfs::path& path, const std::string& bytes, bool executable = false);
std::string read_file(const stdfs::path& path);

// Every file under `root` by relative path: content, or "-> target" for a symlink, plus "*" in
// front for an executable. Directories are implied. Written independently of apexnpu's fs layer.
std::map<std::string, std::string> snapshot(const stdfs::path& root);
// The same without the record gen writes at the root of every tree it makes (.apexnpu-gen.json),
// for comparing gen's trees with trees made otherwise.
std::map<std::string, std::string> tree_snapshot(const stdfs::path& root);

// Copies the files of a work tree (without .git) to `to`, keeping modes and symlinks.
void copy_work_tree(const stdfs::path& from, const stdfs::path& to);

}  // namespace apexnpu::test
