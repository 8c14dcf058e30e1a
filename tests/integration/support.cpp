#include "integration/support.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace apexnpu::test {

namespace {

void check_git(int rc, const char* what) {
  if (rc >= 0) return;
  const git_error* e = git_error_last();
  throw std::runtime_error(std::string(what) + ": " + (e != nullptr ? e->message : "?"));
}

// libgit2 handles released at scope exit.
template <typename T, void (*Free)(T*)>
struct GitPtr {
  T* p = nullptr;
  ~GitPtr() { if (p != nullptr) Free(p); }
};

}  // namespace

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

RunResult run_apexnpu(const std::vector<std::string>& args, const stdfs::path& home,
                      const stdfs::path& cwd) {
  return run_process(APEXNPU_BINARY, args,
                     {"HOME=" + home.string(), "XDG_CACHE_HOME=" + (home / "cache").string(),
                      "NO_COLOR=1", "APEXNPU_UPSTREAM="},
                     cwd);
}

void write_file(const stdfs::path& path, const std::string& bytes, bool executable) {
  stdfs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) throw std::runtime_error("cannot write " + path.string());
  stdfs::permissions(path,
                     executable ? stdfs::perms(0755) : stdfs::perms(0644),
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
  for (auto it = stdfs::recursive_directory_iterator(root);
       it != stdfs::recursive_directory_iterator(); ++it) {
    const auto rel = it->path().lexically_relative(root).generic_string();
    if (it->is_symlink()) {
      files[rel] = "-> " + stdfs::read_symlink(it->path()).string();
    } else if (it->is_regular_file()) {
      const bool exec = (stdfs::status(it->path()).permissions() & stdfs::perms::owner_exec) !=
                        stdfs::perms::none;
      files[rel] = (exec ? "*" : "") + read_file(it->path());
    }
  }
  return files;
}

FixtureRepo::FixtureRepo(const stdfs::path& dir) : dir_(dir) {
  git_libgit2_init();
  stdfs::create_directories(dir_);
  check_git(git_repository_init(&repo_, dir_.c_str(), 0), "git init");
}

FixtureRepo::~FixtureRepo() {
  git_repository_free(repo_);
  git_libgit2_shutdown();
}

void FixtureRepo::write(const std::string& path, const std::string& bytes, bool executable) {
  write_file(dir_ / path, bytes, executable);
}

void FixtureRepo::symlink(const std::string& path, const std::string& target) {
  stdfs::create_directories((dir_ / path).parent_path());
  stdfs::create_symlink(target, dir_ / path);
}

void FixtureRepo::remove(const std::string& path) { stdfs::remove(dir_ / path); }

std::string FixtureRepo::commit(const std::string& message) {
  GitPtr<git_index, git_index_free> index;
  check_git(git_repository_index(&index.p, repo_), "index");
  git_strarray all{};
  char star[] = "*";
  char* paths[] = {star};
  all.strings = paths;
  all.count = 1;
  check_git(git_index_add_all(index.p, &all, GIT_INDEX_ADD_DEFAULT, nullptr, nullptr), "add");
  check_git(git_index_update_all(index.p, &all, nullptr, nullptr), "update");
  check_git(git_index_write(index.p), "write index");
  git_oid tree_id, commit_id;
  check_git(git_index_write_tree(&tree_id, index.p), "write tree");
  GitPtr<git_tree, git_tree_free> tree;
  check_git(git_tree_lookup(&tree.p, repo_, &tree_id), "tree lookup");
  GitPtr<git_signature, git_signature_free> sig;
  check_git(git_signature_new(&sig.p, "Fixture", "fixture@example.invalid",
                              1700000000 + 60 * commits_++, 0), "signature");
  GitPtr<git_commit, git_commit_free> parent;
  git_oid head;
  const bool has_parent = git_reference_name_to_id(&head, repo_, "HEAD") == 0;
  if (has_parent) check_git(git_commit_lookup(&parent.p, repo_, &head), "parent");
  const git_commit* parents[] = {parent.p};
  check_git(git_commit_create(&commit_id, repo_, "HEAD", sig.p, sig.p, nullptr, message.c_str(),
                              tree.p, has_parent ? 1 : 0, parents),
            "commit");
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &commit_id);
  return hex;
}

void FixtureRepo::tag(const std::string& name, const std::string& sha, bool annotated) {
  git_oid id, tag_id;
  check_git(git_oid_fromstr(&id, sha.c_str()), "oid");
  GitPtr<git_object, git_object_free> target;
  check_git(git_object_lookup(&target.p, repo_, &id, GIT_OBJECT_COMMIT), "tag target");
  if (annotated) {
    GitPtr<git_signature, git_signature_free> sig;
    check_git(git_signature_new(&sig.p, "Fixture", "fixture@example.invalid", 1700000000, 0), "sig");
    check_git(git_tag_create(&tag_id, repo_, name.c_str(), target.p, sig.p, "a tag", 0), "tag");
  } else {
    check_git(git_tag_create_lightweight(&tag_id, repo_, name.c_str(), target.p, 0), "tag");
  }
}

void FixtureRepo::branch(const std::string& name, const std::string& sha) {
  git_oid id;
  check_git(git_oid_fromstr(&id, sha.c_str()), "oid");
  GitPtr<git_commit, git_commit_free> commit;
  check_git(git_commit_lookup(&commit.p, repo_, &id), "branch target");
  GitPtr<git_reference, git_reference_free> ref;
  check_git(git_branch_create(&ref.p, repo_, name.c_str(), commit.p, 1), "branch");
}

}  // namespace apexnpu::test
