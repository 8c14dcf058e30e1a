// A repository whose pack was cut short (issue 44, point 7): a disk that filled up, a copy that
// stopped. libgit2 drops a pack whose end does not match its index, so its objects read as
// missing and the ref "is not in the upstream repository"; docs/COMMANDS.md promises that an
// unknown ref and a damaged repository are told apart. The repository is made with libgit2 and
// packed by libgit2's pack builder, as git gc would leave it.
#include <git2.h>
#include <gtest/gtest.h>

#include "integration/support.h"

namespace apexnpu::test {
namespace {

void check_git(int rc, const char* what) {
  if (rc >= 0) return;
  const git_error* e = git_error_last();
  FAIL() << what << ": " << (e != nullptr ? e->message : "?");
}

class CutPack : public ::testing::Test {
 protected:
  CutPack() : repo(tmp / "upstream") {
    repo.write("a.py", "A = 1\n");
    repo.write("pkg/b.py", "B = 2\n");
    commit = repo.commit("first");
    repo.branch("main-line", commit);
    pack_everything();
    write_file(tmp / "empty.patch", "");
  }

  // Every object of the repository into one pack (libgit2's pack builder), loose copies removed,
  // so the commit can only be read from the pack.
  void pack_everything() {
    git_libgit2_init();
    git_repository* raw = nullptr;
    check_git(git_repository_open(&raw, repo.dir().c_str()), "open");
    git_packbuilder* builder = nullptr;
    check_git(git_packbuilder_new(&builder, raw), "packbuilder");
    git_oid id;
    check_git(git_oid_fromstr(&id, commit.c_str()), "oid");
    check_git(git_packbuilder_insert_commit(builder, &id), "insert");
    const stdfs::path objects = repo.dir() / ".git" / "objects";
    check_git(git_packbuilder_write(builder, (objects / "pack").c_str(), 0, nullptr, nullptr), "write");
    git_packbuilder_free(builder);
    git_repository_free(raw);
    git_libgit2_shutdown();
    for (const auto& entry : stdfs::directory_iterator(objects))
      if (entry.path().filename().string().size() == 2) stdfs::remove_all(entry.path());
    for (const auto& entry : stdfs::directory_iterator(objects / "pack"))
      if (entry.path().extension() == ".pack") pack = entry.path();
    ASSERT_FALSE(pack.empty());
  }

  RunResult gen(const std::string& ref) {
    return run_apexnpu({"gen", "--upstream", repo.dir().string(), "--ref", ref, "--patch",
                        (tmp / "empty.patch").string(), "--no-overlay", "-o", (tmp / "out").string()},
                       tmp / "home");
  }

  void expect_damaged(const RunResult& r) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.err.find("is not in the upstream repository"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("damaged"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(pack.string()), std::string::npos) << r.err;
    EXPECT_FALSE(stdfs::exists(tmp / "out"));
  }

  TempDir tmp;
  FixtureRepo repo;
  std::string commit;
  stdfs::path pack;
};

TEST_F(CutPack, IntactItReads) {
  const RunResult r = gen("main-line");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(tmp / "out" / "pkg" / "b.py"), "B = 2\n");
}

// Its trailer (the 20-byte checksum) cut, by part and whole, and a pack cut into its objects:
// asked by branch name or by commit id, the answer is a damaged repository naming the pack.
TEST_F(CutPack, APackWithItsTrailerCutReadsAsDamagedNotAsAnUnknownRef) {
  const std::string whole = read_file(pack);
  for (const std::size_t cut : {1u, 20u, 30u}) {
    SCOPED_TRACE(cut);
    stdfs::permissions(pack, stdfs::perms::owner_all, stdfs::perm_options::add);
    write_file(pack, whole.substr(0, whole.size() - cut));
    expect_damaged(gen("main-line"));
    expect_damaged(gen(commit));
  }
  // A ref that is not there is still said to be missing, once the pack is whole again.
  write_file(pack, whole);
  const RunResult unknown = gen("no-such-branch");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no-such-branch is not in the upstream repository"), std::string::npos)
      << unknown.err;
}

}  // namespace
}  // namespace apexnpu::test
