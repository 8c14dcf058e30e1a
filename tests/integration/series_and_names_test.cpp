// gen and make-patch with what issue 13 added: a concatenated series applied by gen exactly as
// GNU patch -p1 applies it (and with --keep-rejects, one .rej per file holding every section's
// failed hunks); upstream files whose names need quoting (but for control characters, refused
// since issue 44), edited and created, round trip through make-patch and gen, and GNU patch and
// git apply take make-patch's output.
#include <gtest/gtest.h>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

// Names with control characters (a tab, a newline) are refused since issue 44 (git's path rules,
// core/git_path_rules.h): git_path_rules_test.cpp has them.
const std::vector<std::string> special_names = {"docs/with space.md", "q\"uote.py",
                                                "na\xc3\xafve/\xe4\xb8\xad.py", "back\\slash.cfg"};

class SeriesAndNamesTest : public ::testing::Test {
 protected:
  SeriesAndNamesTest() : repo(tmp / "upstream") {
    repo.write("README", numbered_lines("readme", 10));
    for (const auto& name : special_names) repo.write(name, numbered_lines("special", 8));
    sha = repo.commit("upstream");
    copy_work_tree(repo.dir(), pristine);
  }

  RunResult gen(const stdfs::path& patch, const stdfs::path& out, std::vector<std::string> more = {}) {
    std::vector<std::string> args{"gen",     "--upstream",   repo.dir().string(), "--ref", sha,
                                  "--patch", patch.string(), "--no-overlay",      "-o",    out.string()};
    args.insert(args.end(), more.begin(), more.end());
    return run_apexnpu(args, tmp / "home");
  }

  TempDir tmp;
  FixtureRepo repo;
  std::string sha;
  stdfs::path pristine = tmp / "pristine";
};

TEST_F(SeriesAndNamesTest, GenAppliesAConcatenatedSeriesAsGnuPatchDoes) {
  const std::string series =
      "From: one\nSubject: [PATCH 1/3] create\n---\n"
      "diff --git a/apex/npu.py b/apex/npu.py\nnew file mode 100644\n--- /dev/null\n+++ b/apex/npu.py\n"
      "@@ -0,0 +1,2 @@\n+DEVICE = 'npu'\n+COUNT = 1\n"
      "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1,3 +1,3 @@\n-readme line 1\n+npu 1\n"
      " readme line 2\n readme line 3\n"
      "From: two\nSubject: [PATCH 2/3] modify\n---\n"
      "diff --git a/apex/npu.py b/apex/npu.py\n--- a/apex/npu.py\n+++ b/apex/npu.py\n@@ -1,2 +1,2 @@\n"
      " DEVICE = 'npu'\n-COUNT = 1\n+COUNT = 8\n"
      "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1,3 +1,3 @@\n npu 1\n-readme line 2\n"
      "+npu 2\n readme line 3\n"
      "From: three\nSubject: [PATCH 3/3] delete\n---\n"
      "diff --git \"a/q\\\"uote.py\" \"b/q\\\"uote.py\"\ndeleted file mode 100644\n"
      "--- \"a/q\\\"uote.py\"\n+++ /dev/null\n@@ -1,8 +0,0 @@\n" +
      [] {
        std::string removed;
        for (int i = 1; i <= 8; ++i) removed += "-special line " + std::to_string(i) + "\n";
        return removed;
      }();
  write_file(tmp / "series.patch", series);
  const RunResult r = gen(tmp / "series.patch", tmp / "out");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  copy_work_tree(pristine, tmp / "gnu");
  ASSERT_EQ(gnu_patch(tmp / "gnu", tmp / "series.patch"), 0);
  EXPECT_EQ(tree_snapshot(tmp / "out"), tree_snapshot(tmp / "gnu"));
  EXPECT_EQ(read_file(tmp / "out/apex/npu.py"), "DEVICE = 'npu'\nCOUNT = 8\n");
}

TEST_F(SeriesAndNamesTest, KeepRejectsGathersEverySectionsFailuresInOneFile) {
  write_file(
      tmp / "two.patch",
      "--- a/README\n+++ b/README\n@@ -1,3 +1,3 @@\n-not line 1\n+x\n readme line 2\n readme line 3\n"
      "--- a/README\n+++ b/README\n@@ -8,3 +8,3 @@\n-not line 8\n+y\n readme line 9\n readme line 10\n");
  EXPECT_EQ(gen(tmp / "two.patch", tmp / "nothing").exit_code, 1);
  EXPECT_FALSE(stdfs::exists(tmp / "nothing")) << "nothing written";
  const RunResult kept = gen(tmp / "two.patch", tmp / "kept", {"--keep-rejects"});
  EXPECT_EQ(kept.exit_code, 1);
  const std::string rej = read_file(tmp / "kept/README.rej");
  EXPECT_NE(rej.find("-not line 1"), std::string::npos) << rej;
  EXPECT_NE(rej.find("-not line 8"), std::string::npos) << rej;
}

TEST_F(SeriesAndNamesTest, SpecialNamesRoundTripThroughMakePatchAndGen) {
  copy_work_tree(pristine, tmp / "edited");
  for (const auto& name : special_names) {
    std::string text = read_file(tmp / "edited" / name);
    text.replace(text.find("special line 4\n"), 15, "npu line 4\n");
    write_file(tmp / "edited" / name, text);
  }
  stdfs::remove(tmp / "edited/back\\slash.cfg");
  write_file(tmp / "edited/new dir/\"quoted\" \xc3\xa9.py", "NEW = 1\n");
  const RunResult made = run_apexnpu({"make-patch", "--upstream", repo.dir().string(), "--ref", sha, "--tree",
                                      (tmp / "edited").string(), "-o", (tmp / "patches").string()},
                                     tmp / "home");
  ASSERT_EQ(made.exit_code, 0) << made.err;

  const RunResult regen = run_apexnpu({"gen", "--upstream", repo.dir().string(), "--ref", sha, "--patch",
                                       (tmp / "patches/npu.patch").string(), "--overlay",
                                       (tmp / "patches/overlay").string(), "-o", (tmp / "regen").string()},
                                      tmp / "home");
  ASSERT_EQ(regen.exit_code, 0) << regen.err;
  EXPECT_EQ(tree_snapshot(tmp / "regen"), tree_snapshot(tmp / "edited"));

  copy_work_tree(pristine, tmp / "gnu");
  ASSERT_EQ(gnu_patch(tmp / "gnu", tmp / "patches/npu.patch"), 0);
  copy_work_tree(tmp / "patches/overlay", tmp / "gnu");
  EXPECT_EQ(tree_snapshot(tmp / "gnu"), tree_snapshot(tmp / "edited")) << "GNU patch";

  copy_work_tree(pristine, tmp / "git");
  const RunResult git = run_process("git", {"apply", (tmp / "patches/npu.patch").string()}, {}, tmp / "git");
  ASSERT_EQ(git.exit_code, 0) << git.err;
  copy_work_tree(tmp / "patches/overlay", tmp / "git");
  EXPECT_EQ(tree_snapshot(tmp / "git"), tree_snapshot(tmp / "edited")) << "git apply";
}

}  // namespace
}  // namespace apexnpu::test
