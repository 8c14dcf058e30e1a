#include "support/test_support.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace apexnpu::test {

TempDir::TempDir() {
  std::string pattern = (stdfs::temp_directory_path() / "apexnpu-it-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Tests make read-only directories; give write permission back before removing.
  for (auto it = stdfs::recursive_directory_iterator(path_, ec);
       !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_directory(ec) && !it->is_symlink(ec))
      stdfs::permissions(it->path(), stdfs::perms::owner_all, stdfs::perm_options::add, ec);
  stdfs::remove_all(path_, ec);
}

RunResult run_process(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& env, const stdfs::path& cwd) {
  TempDir capture;
  const std::string out_path = (capture / "stdout").string();
  const std::string err_path = (capture / "stderr").string();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());

  std::vector<std::string> argv_storage{program};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  // The parent's environment, with `env` entries overriding same-named ones.
  std::vector<std::string> env_storage(env.begin(), env.end());
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    bool overridden = false;
    for (const auto& o : env) overridden |= o.compare(0, name.size() + 1, name + "=") == 0;
    if (!overridden) env_storage.push_back(entry);
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + program);
  int status = 0;
  ::waitpid(pid, &status, 0);

  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  return result;
}

void write_file(const stdfs::path& path, const std::string& bytes, bool executable) {
  stdfs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw std::runtime_error("cannot write " + path.string());
  stdfs::permissions(path, executable ? stdfs::perms(0755) : stdfs::perms(0644),
                     stdfs::perm_options::replace);
}

std::string read_file(const stdfs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::map<std::string, std::string> snapshot(const stdfs::path& root) {
  std::map<std::string, std::string> files;
  for (auto it = stdfs::recursive_directory_iterator(root); it != stdfs::recursive_directory_iterator();
       ++it) {
    const auto rel = it->path().lexically_relative(root).generic_string();
    if (it->is_symlink()) {
      files[rel] = "-> " + stdfs::read_symlink(it->path()).string();
    } else if (it->is_regular_file()) {
      const bool exec =
          (stdfs::status(it->path()).permissions() & stdfs::perms::owner_exec) != stdfs::perms::none;
      files[rel] = (exec ? "*" : "") + read_file(it->path());
    }
  }
  return files;
}

}  // namespace apexnpu::test

namespace apexnpu::test {

std::map<std::string, std::string> tree_snapshot(const stdfs::path& root) {
  std::map<std::string, std::string> files = snapshot(root);
  files.erase(".apexnpu-gen.json");
  return files;
}

void copy_work_tree(const stdfs::path& from, const stdfs::path& to) {
  stdfs::create_directories(to);
  for (const auto& entry : stdfs::directory_iterator(from)) {
    if (entry.path().filename() == ".git") continue;
    stdfs::copy(entry.path(), to / entry.path().filename(),
                stdfs::copy_options::recursive | stdfs::copy_options::copy_symlinks);
  }
}

}  // namespace apexnpu::test
