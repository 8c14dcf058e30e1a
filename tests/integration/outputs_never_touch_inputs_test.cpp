// Outputs never touch inputs: gen, make-patch and build refuse an -o that is, contains or lies
// inside what they read (the upstream repository, a linked worktree and the repository it
// shares, alternates, the patch and the overlay, --tree), before writing anything; --force
// never deletes what is read.
#include <git2.h>
#include <gtest/gtest.h>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class OutputsNeverTouchInputs : public ::testing::Test {
 protected:
  OutputsNeverTouchInputs() : upstream(tmp.path()) {
    write_file(patch_dir / "npu.patch",
               "--- a/README\n+++ b/README\n@@ -1,2 +1,2 @@\n-readme line 1\n+npu line 1\n readme line 2\n");
    write_file(patch_dir / "overlay" / "apex/npu/extra.py", "EXTRA = 1\n");
  }

  RunResult gen(const stdfs::path& upstream_path, const stdfs::path& out,
                std::vector<std::string> extra = {"--force"}) {
    std::vector<std::string> args{"gen",
                                  "--upstream",
                                  upstream_path.string(),
                                  "--ref",
                                  upstream.first,
                                  "--patch",
                                  (patch_dir / "npu.patch").string(),
                                  "--overlay",
                                  (patch_dir / "overlay").string(),
                                  "-o",
                                  out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_apexnpu(args, tmp / "home");
  }

  // A refusal: bad usage, the message naming -o and what it would have touched, nothing changed.
  void expect_refused(const RunResult& r, const std::string& role,
                      const std::map<std::string, std::string>& before, const stdfs::path& dir) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("-o "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(role), std::string::npos) << r.err;
    EXPECT_EQ(snapshot(dir), before) << dir;
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  stdfs::path patch_dir = tmp / "patches";
};

TEST_F(OutputsNeverTouchInputs, GenRefusesTheRepositoryItsPartsAndWhatHoldsIt) {
  const stdfs::path repo = upstream.repo.dir();
  const auto before = snapshot(repo);
  expect_refused(gen(repo, repo), "is the upstream repository", before, repo);
  expect_refused(gen(repo, repo / ".git" / "objects"), "lies inside the upstream repository", before, repo);
  expect_refused(gen(repo, repo / "apex"), "lies inside the upstream repository", before, repo);
  expect_refused(gen(repo / ".git", repo / ".git"), "the upstream repository", before, repo);
  // tmp holds the repository (and the patch): --force would have deleted both.
  expect_refused(gen(repo, tmp.path()), "contains", before, repo);
  // Another spelling of the same directory: a symlink to it, a path through "..".
  stdfs::create_directory_symlink(repo, tmp / "link");
  expect_refused(gen(repo, tmp / "link"), "is the upstream repository", before, repo);
  expect_refused(gen(repo, repo / "apex" / ".." / ".git"), "the upstream repository", before, repo);
  // Without --force the refusal comes first too, not the advice to pass --force.
  const RunResult plain = gen(repo, repo, {});
  expect_refused(plain, "the upstream repository", before, repo);
  EXPECT_EQ(plain.err.find("--force"), std::string::npos) << plain.err;
}

TEST_F(OutputsNeverTouchInputs, GenRefusesALinkedWorktreeAndTheRepositoryItShares) {
  git_libgit2_init();
  git_repository* repo = nullptr;
  ASSERT_EQ(git_repository_open(&repo, upstream.repo.dir().c_str()), 0);
  git_worktree* worktree = nullptr;
  const stdfs::path wt = tmp / "wt";
  ASSERT_EQ(git_worktree_add(&worktree, repo, "wt", wt.c_str(), nullptr), 0) << git_error_last()->message;
  git_worktree_free(worktree);
  git_repository_free(repo);
  git_libgit2_shutdown();

  const auto before_wt = snapshot(wt);
  const auto before_repo = snapshot(upstream.repo.dir());
  expect_refused(gen(wt, wt), "is the upstream repository", before_wt, wt);
  expect_refused(gen(wt, upstream.repo.dir() / ".git"), "the upstream repository", before_repo,
                 upstream.repo.dir());
  expect_refused(gen(wt, upstream.repo.dir() / ".git" / "worktrees"), "the upstream repository", before_repo,
                 upstream.repo.dir());
  // Outside both, the worktree is an upstream like any other.
  const RunResult r = gen(wt, tmp / "out", {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(tmp / "out" / "README").substr(0, 11), "npu line 1\n");
}

TEST_F(OutputsNeverTouchInputs, GenRefusesTheObjectsOfAnAlternate) {
  // A repository that borrows every object from the fixture's through objects/info/alternates.
  const stdfs::path borrower = tmp / "borrower.git";
  for (const char* dir : {"objects/info", "objects/pack", "refs/heads", "refs/tags"})
    stdfs::create_directories(borrower / dir);
  write_file(borrower / "HEAD", "ref: refs/heads/main\n");
  write_file(borrower / "config", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n");
  write_file(borrower / "objects/info/alternates", (upstream.repo.dir() / ".git/objects").string() + "\n");
  const auto before = snapshot(upstream.repo.dir());
  expect_refused(gen(borrower, upstream.repo.dir() / ".git" / "objects" / "pack"), "the upstream repository",
                 before, upstream.repo.dir());
  const RunResult r = gen(borrower, tmp / "out", {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(OutputsNeverTouchInputs, GenRefusesThePatchAndTheOverlay) {
  const auto before = snapshot(patch_dir);
  expect_refused(gen(upstream.repo.dir(), patch_dir), "contains the patch", before, patch_dir);
  expect_refused(gen(upstream.repo.dir(), patch_dir / "overlay"), "the overlay", before, patch_dir);
  expect_refused(gen(upstream.repo.dir(), patch_dir / "overlay" / "apex"), "lies inside the overlay", before,
                 patch_dir);
  // The reject report beside -o would overwrite the patch.
  const RunResult r =
      run_apexnpu({"gen", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first, "--patch",
                   (tmp / "apex.rej").string(), "--no-overlay", "-o", (tmp / "apex").string()},
                  tmp / "home");
  EXPECT_EQ(r.exit_code, 1);  // the patch does not exist: nothing else is said about it
  write_file(tmp / "apex.rej", read_file(patch_dir / "npu.patch"));
  const RunResult rej =
      run_apexnpu({"gen", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first, "--patch",
                   (tmp / "apex.rej").string(), "--no-overlay", "-o", (tmp / "apex").string()},
                  tmp / "home");
  EXPECT_EQ(rej.exit_code, 2) << rej.err;
  EXPECT_NE(rej.err.find("reject report"), std::string::npos) << rej.err;
  EXPECT_FALSE(stdfs::exists(tmp / "apex"));
}

class MakePatchOutputs : public OutputsNeverTouchInputs {
 protected:
  MakePatchOutputs() {
    copy_work_tree(upstream.at_first, tree);
    write_file(tree / "apex/npu/new.py", "NEW = 1\n");
  }

  RunResult make_patch(const stdfs::path& out) {
    return run_apexnpu({"make-patch", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
                        "--tree", tree.string(), "-o", out.string()},
                       tmp / "home");
  }

  stdfs::path tree = tmp / "edited";
};

TEST_F(MakePatchOutputs, RefusesAnOutputInsideTheTreeItReads) {
  const auto before = snapshot(tree);
  expect_refused(make_patch(tree / "patches"), "lies inside the edited tree", before, tree);
  expect_refused(make_patch(tree), "is the edited tree", before, tree);
  expect_refused(make_patch(tmp.path()), "contains the edited tree", before, tree);
  EXPECT_FALSE(stdfs::exists(tree / "patches"));
}

TEST_F(MakePatchOutputs, ASecondRunNeverTakesInItsOwnOutput) {
  // What issue 12 saw: -o inside --tree, run twice, put overlay/overlay/... into the overlay.
  // Now the first run is refused; outside the tree, a second run gives the same output.
  const stdfs::path out = tmp / "patches-out";
  ASSERT_EQ(make_patch(out).exit_code, 0);
  const auto first = snapshot(out);
  ASSERT_EQ(make_patch(out).exit_code, 0);
  EXPECT_EQ(snapshot(out), first);
  EXPECT_EQ(first.count("overlay/apex/npu/new.py"), 1u);
}

TEST_F(MakePatchOutputs, RefusesAnOutputInsideTheUpstreamRepository) {
  const auto before = snapshot(upstream.repo.dir());
  expect_refused(make_patch(upstream.repo.dir()), "is the upstream repository", before, upstream.repo.dir());
  expect_refused(make_patch(upstream.repo.dir() / ".git"), "the upstream repository", before,
                 upstream.repo.dir());
}

TEST_F(MakePatchOutputs, BuildRefusesAnOutputInsideItsTree) {
  const auto before = snapshot(tree);
  const RunResult r =
      run_apexnpu({"build", "--tree", tree.string(), "-o", (tree / "dist").string()}, tmp / "home");
  expect_refused(r, "lies inside the tree", before, tree);
  expect_refused(run_apexnpu({"build", "--tree", tree.string(), "-o", tree.string()}, tmp / "home"),
                 "is the tree", before, tree);
}

}  // namespace
}  // namespace apexnpu::test
