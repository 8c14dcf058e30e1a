// Kills at each rename point (issue 26, cases 8 and 9): gen --force and make-patch are run with a
// fault injector that kills them (SIGKILL) at their Nth rename, for every N up to a run that
// completes. After each kill the output is the old one or the new one, never a mix or nothing
// (make-patch's pair as every reader sees it, finished by the next run), and the next run leaves
// nothing of the killed one beside the output.
#include <gtest/gtest.h>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

constexpr int kMostRenames = 64;  // far more than any of these runs makes

class KillAtRename : public ::testing::Test {
 protected:
  KillAtRename() : upstream(tmp.path()) { write_file(tmp / "empty.patch", ""); }

  // gen --force over the fixture's upstream.
  std::vector<std::string> forced_gen(const std::string& ref, const stdfs::path& out,
                                      const stdfs::path& patch, const stdfs::path& overlay) {
    std::vector<std::string> args = gen_args(upstream, ref, patch, overlay, out);
    args.push_back("--force");
    return args;
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
};

TEST_F(KillAtRename, GenForceLeavesTheOldTreeOrTheNewOne) {
  write_file(tmp / "overlay" / "apex/npu/extra.py", "EXTRA = 1\n");
  const stdfs::path out = tmp / "out";
  auto gen_of = [&](const std::string& ref, const stdfs::path& where) {
    return forced_gen(ref, where, tmp / "empty.patch", tmp / "overlay");
  };
  ASSERT_EQ(run_apexnpu(gen_of(upstream.second, tmp / "new"), tmp / "home").exit_code, 0);
  const auto new_tree = snapshot(tmp / "new");
  ASSERT_EQ(run_apexnpu(gen_of(upstream.first, out), tmp / "home").exit_code, 0);
  const auto old_tree = snapshot(out);
  ASSERT_NE(old_tree, new_tree);

  int kills = 0;
  for (int n = 1; n <= kMostRenames; ++n) {
    const RunResult r = run_apexnpu_killed_at_rename(n, gen_of(upstream.second, out), tmp / "home");
    if (r.exit_code == 0) break;
    ASSERT_EQ(r.exit_code, kKilled) << "rename " << n << ": " << r.err;
    ++kills;
    ASSERT_TRUE(stdfs::exists(out)) << "killed at rename " << n << ": no output at all";
    const auto now = snapshot(out);
    EXPECT_TRUE(now == old_tree || now == new_tree) << "killed at rename " << n << ": a mixed tree";
    // Back to the old tree; the next run (killed one rename later) removes what this one left.
    ASSERT_EQ(run_apexnpu(gen_of(upstream.first, out), tmp / "home").exit_code, 0);
    EXPECT_EQ(leftovers_beside(out), std::vector<std::string>{}) << "after the kill at rename " << n;
  }
  EXPECT_GE(kills, 1) << "gen --force made no rename to kill it at";
  EXPECT_EQ(snapshot(out), new_tree);
  EXPECT_EQ(leftovers_beside(out), std::vector<std::string>{});
}

TEST_F(KillAtRename, AKilledGenLeavesNothingForever) {
  // Killed while its tree is staged, before any rename into place: the staging stays until the
  // next run into the same output, which removes it (and only it: a live run's stays).
  const stdfs::path out = tmp / "out";
  write_file(tmp / "overlay2" / ".keep", "");
  const auto args = forced_gen(upstream.first, out, tmp / "empty.patch", tmp / "overlay2");
  ASSERT_EQ(run_apexnpu_killed_at_rename(1, args, tmp / "home").exit_code, kKilled);
  EXPECT_FALSE(stdfs::exists(out));
  EXPECT_EQ(leftovers_beside(out).size(), 1u) << "the staging of the killed run";
  ASSERT_EQ(run_apexnpu(args, tmp / "home").exit_code, 0);
  EXPECT_EQ(leftovers_beside(out), std::vector<std::string>{});
}

// make-patch of two different edits into one -o; the second killed at each of its renames.
class MakePatchKills : public KillAtRename {
 protected:
  MakePatchKills() {
    copy_work_tree(upstream.at_first, tree_a);
    write_file(tree_a / "README", "edit a\n");
    write_file(tree_a / "apex/npu/a.py", "A = 1\n");
    copy_work_tree(upstream.at_first, tree_b);
    write_file(tree_b / "apex/__init__.py", "# edit b\n");
    write_file(tree_b / "apex/npu/b.py", "B = 1\n");
    write_file(tree_b / "tools/more.py", "MORE = 1\n");
  }

  std::vector<std::string> make_patch_args(const stdfs::path& tree) {
    return {"make-patch",  "--upstream",   upstream.repo.dir().string(),
            "--ref",       upstream.first, "--tree",
            tree.string(), "-o",           out.string()};
  }

  // The tree gen makes of the pair in `patches` as a reader finds it now.
  std::map<std::string, std::string> tree_of_pair(const std::string& name) {
    const stdfs::path where = tmp / ("read-" + name);
    const RunResult r = run_apexnpu(
        {"gen", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first, "--patch",
         (out / "npu.patch").string(), "--overlay", (out / "overlay").string(), "-o", where.string()},
        tmp / "home");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? snapshot(where) : std::map<std::string, std::string>{};
  }

  stdfs::path tree_a = tmp / "edit-a", tree_b = tmp / "edit-b", out = tmp / "patches";
};

TEST_F(MakePatchKills, ThePairIsTheOldOneOrTheNewOneNeverAMix) {
  ASSERT_EQ(run_apexnpu(make_patch_args(tree_b), tmp / "home").exit_code, 0);
  const auto pair_b = snapshot(out);
  const auto tree_from_b = tree_of_pair("b");
  stdfs::remove_all(out);
  ASSERT_EQ(run_apexnpu(make_patch_args(tree_a), tmp / "home").exit_code, 0);
  const auto pair_a = snapshot(out);
  const auto tree_from_a = tree_of_pair("a");
  ASSERT_NE(tree_from_a, tree_from_b);

  int kills = 0;
  for (int n = 1; n <= kMostRenames; ++n) {
    const RunResult r = run_apexnpu_killed_at_rename(n, make_patch_args(tree_b), tmp / "home");
    if (r.exit_code == 0) break;
    ASSERT_EQ(r.exit_code, kKilled) << "rename " << n << ": " << r.err;
    ++kills;
    // What a reader (gen) finds: one pair or the other, whole.
    const auto seen = tree_of_pair("after-" + std::to_string(n));
    EXPECT_TRUE(seen == tree_from_a || seen == tree_from_b) << "killed at rename " << n << ": a mixed pair";
    // The next make-patch finishes or drops the killed one's update first, then writes its own.
    ASSERT_EQ(run_apexnpu(make_patch_args(tree_a), tmp / "home").exit_code, 0) << "after rename " << n;
    EXPECT_EQ(snapshot(out), pair_a) << "after the kill at rename " << n;
    EXPECT_EQ(leftovers_beside(out), std::vector<std::string>{}) << "after the kill at rename " << n;
  }
  EXPECT_GE(kills, 4) << "make-patch should make several renames to kill it at";
  EXPECT_EQ(snapshot(out), pair_b);
}

TEST_F(MakePatchKills, AnOutputThatDidNotExistAppearsWholeOrNotAtAll) {
  for (int n = 1; n <= kMostRenames; ++n) {
    stdfs::remove_all(out);
    const RunResult r = run_apexnpu_killed_at_rename(n, make_patch_args(tree_b), tmp / "home");
    if (r.exit_code == 0) break;
    ASSERT_EQ(r.exit_code, kKilled) << r.err;
    EXPECT_FALSE(stdfs::exists(out)) << "killed at rename " << n << ": a partial output";
  }
  EXPECT_TRUE(stdfs::exists(out / "npu.patch"));
  EXPECT_TRUE(stdfs::exists(out / "overlay" / "apex/npu/b.py"));
}

}  // namespace
}  // namespace apexnpu::test
