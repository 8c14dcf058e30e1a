#include "support/fixture_repo.h"

#include <stdexcept>

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
  ~GitPtr() {
    if (p != nullptr) Free(p);
  }
};

}  // namespace

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
  check_git(git_signature_new(&sig.p, "Fixture", "fixture@example.invalid", 1700000000 + 60 * commits_++, 0),
            "signature");
  GitPtr<git_commit, git_commit_free> parent;
  git_oid head;
  const bool has_parent = git_reference_name_to_id(&head, repo_, "HEAD") == 0;
  if (has_parent) check_git(git_commit_lookup(&parent.p, repo_, &head), "parent");
  const git_commit* parents[] = {parent.p};
  check_git(git_commit_create(&commit_id, repo_, "HEAD", sig.p, sig.p, nullptr, message.c_str(), tree.p,
                              has_parent ? 1 : 0, parents),
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
