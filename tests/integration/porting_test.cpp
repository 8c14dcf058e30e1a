// Moving the patch to a new upstream commit, the way CONTRIBUTING's recipe does it: gen --keep-rejects
// at the new commit, fix the rejected files by hand, make-patch --ref, and a patch that applies
// cleanly (and that GNU patch accepts too).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class PortingTest : public ::testing::Test {
 protected:
  PortingTest() : repo(tmp / "upstream") {
    repo.write("apex/a.py", numbered_lines("a", 30));
    repo.write("apex/b.py", numbered_lines("b", 30));
    old_commit = repo.commit("old upstream");
    // The NPU edits of the old commit, as patches/ (a patch and an overlay).
    run_ok({"gen", "--no-overlay", "--patch", empty_patch().string(), "--ref", old_commit, "-o",
            (tmp / "edited").string()});
    edit(tmp / "edited/apex/a.py", "a line 10\n", "a line 10 for the NPU\n");
    edit(tmp / "edited/apex/b.py", "b line 20\n", "b line 20 for the NPU\n");
    write_file(tmp / "edited/apex/npu.py", "DEVICE = 'npu'\n");
    run_ok({"make-patch", "--ref", old_commit, "--tree", (tmp / "edited").string(), "-o",
            (tmp / "patches").string()});
    // The new upstream rewrote the line the NPU edit of a.py touches; b.py only moved.
    std::string a = numbered_lines("a", 30);
    a.replace(a.find("a line 10\n"), 10, "a line 10, rewritten upstream\n");
    repo.write("apex/a.py", a);
    repo.write("apex/b.py", "b new first line\n" + numbered_lines("b", 30));
    new_commit = repo.commit("new upstream");
  }

  stdfs::path empty_patch() {
    write_file(tmp / "empty.patch", "");
    return tmp / "empty.patch";
  }

  static void edit(const stdfs::path& file, const std::string& from, const std::string& to) {
    std::string text = read_file(file);
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    write_file(file, text);
  }

  // Inserts `options` after the command name (global options like --json come before it).
  static std::vector<std::string> with(std::vector<std::string> args,
                                       const std::vector<std::string>& options) {
    auto command =
        std::find_if(args.begin(), args.end(), [](const std::string& a) { return !a.starts_with("-"); });
    args.insert(command + 1, options.begin(), options.end());
    return args;
  }

  RunResult run(std::vector<std::string> args) {
    return run_apexnpu(with(std::move(args), {"--upstream", repo.dir().string()}), tmp / "home");
  }

  void run_ok(std::vector<std::string> args) {
    const RunResult r = run(std::move(args));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  std::vector<std::string> with_patches(const stdfs::path& dir, std::vector<std::string> args) {
    return with(std::move(args),
                {"--patch", (dir / "npu.patch").string(), "--overlay", (dir / "overlay").string()});
  }

  TempDir tmp;
  FixtureRepo repo;
  std::string old_commit, new_commit;
};

TEST_F(PortingTest, KeepRejectsFixByHandMakePatchThenItAppliesCleanly) {
  const stdfs::path tree = tmp / "ported";
  // Without --keep-rejects nothing is written.
  const RunResult refused =
      run(with_patches(tmp / "patches", {"gen", "--ref", new_commit, "-o", tree.string()}));
  ASSERT_EQ(refused.exit_code, 1);
  EXPECT_FALSE(stdfs::exists(tree));

  const RunResult kept = run(with_patches(
      tmp / "patches", {"--json", "gen", "--ref", new_commit, "--keep-rejects", "-o", tree.string()}));
  ASSERT_EQ(kept.exit_code, 1) << kept.out << kept.err;
  EXPECT_NE(kept.err.find("1 hunk(s)"), std::string::npos) << kept.err;
  EXPECT_NE(kept.err.find("apex/a.py"), std::string::npos) << kept.err;
  EXPECT_NE(kept.err.find("make-patch --ref"), std::string::npos) << kept.err;
  // What applied is there (b.py at its offset, the overlay), the failed hunk beside its file.
  EXPECT_NE(read_file(tree / "apex/b.py").find("b line 20 for the NPU\n"), std::string::npos);
  EXPECT_EQ(read_file(tree / "apex/npu.py"), "DEVICE = 'npu'\n");
  EXPECT_NE(read_file(tree / "apex/a.py").find("a line 10, rewritten upstream\n"), std::string::npos);
  const std::string rej = read_file(tree / "apex/a.py.rej");
  EXPECT_NE(rej.find("+a line 10 for the NPU"), std::string::npos) << rej;
  EXPECT_FALSE(stdfs::exists(tree / "apex/b.py.rej"));

  // The maintainer ports the edit by hand; make-patch leaves the .rej out by itself.
  edit(tree / "apex/a.py", "a line 10, rewritten upstream\n", "a line 10, rewritten upstream, for the NPU\n");
  run_ok({"make-patch", "--ref", new_commit, "--tree", tree.string(), "-o", (tmp / "patches-new").string()});
  EXPECT_FALSE(stdfs::exists(tmp / "patches-new/overlay/apex/a.py.rej"));

  const RunResult check =
      run(with_patches(tmp / "patches-new", {"--json", "gen", "--ref", new_commit, "--check"}));
  ASSERT_EQ(check.exit_code, 0) << check.err;
  // Bound first: the range of a for over a temporary's member outlives only the member access.
  const nlohmann::json report = nlohmann::json::parse(check.out);
  for (const auto& file : report["files"]) EXPECT_EQ(file["status"], "clean") << file;
  const stdfs::path gnu = tmp / "gnu";
  run_ok({"gen", "--no-overlay", "--patch", empty_patch().string(), "--ref", new_commit, "-o", gnu.string()});
  EXPECT_EQ(gnu_patch(gnu, tmp / "patches-new/npu.patch"), 0);
  EXPECT_NE(read_file(gnu / "apex/a.py").find("rewritten upstream, for the NPU"), std::string::npos);
}

// Upstream renamed a patched file and the overlay imports the module: the recipe's rename steps.
TEST_F(PortingTest, AFileUpstreamRenamedIsPortedFromItsRejectAsTheRecipeSays) {
  // The overlay imports the module upstream is about to rename.
  write_file(tmp / "edited/apex/npu_uses_b.py", "from apex.b import B\n");
  run_ok({"make-patch", "--ref", old_commit, "--tree", (tmp / "edited").string(), "-o",
          (tmp / "patches").string()});
  std::string b = read_file(repo.dir() / "apex/b.py");
  repo.write("apex/a.py", numbered_lines("a", 30));  // only the rename stands in the way
  repo.remove("apex/b.py");
  repo.write("apex/core/b_moved.py", b);
  const std::string renamed = repo.commit("upstream moves b.py");

  const stdfs::path tree = tmp / "ported";
  const RunResult kept =
      run(with_patches(tmp / "patches", {"gen", "--ref", renamed, "--keep-rejects", "-o", tree.string()}));
  ASSERT_EQ(kept.exit_code, 1) << kept.out << kept.err;
  EXPECT_NE(kept.err.find("apex/b.py does not exist"), std::string::npos) << kept.err;
  ASSERT_TRUE(stdfs::exists(tree / "apex/b.py.rej"));
  EXPECT_FALSE(stdfs::exists(tree / "apex/b.py"));

  // patch -p0 apex/<new path> < apex/<old path>.rej, as the recipe says (GNU patch takes the
  // file to patch as an argument), then the overlay's import of the moved module.
  const RunResult ported =
      run_process("patch", {"--batch", "--no-backup-if-mismatch", "apex/core/b_moved.py", "apex/b.py.rej"},
                  {"LC_ALL=C"}, tree);
  ASSERT_EQ(ported.exit_code, 0) << ported.out << ported.err;
  stdfs::remove(tree / "apex/b.py.rej");
  edit(tree / "apex/npu_uses_b.py", "from apex.b import", "from apex.core.b_moved import");
  run_ok({"make-patch", "--ref", renamed, "--tree", tree.string(), "-o", (tmp / "patches-new").string()});

  const RunResult check =
      run(with_patches(tmp / "patches-new", {"gen", "--ref", renamed, "-o", (tmp / "again").string()}));
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(read_file(tmp / "again/apex/core/b_moved.py").find("b line 20 for the NPU\n"), std::string::npos);
  EXPECT_EQ(read_file(tmp / "again/apex/npu_uses_b.py"), "from apex.core.b_moved import B\n");
  EXPECT_EQ(read_file(tmp / "patches-new/npu.patch").find("apex/b.py"), std::string::npos);
}

TEST_F(PortingTest, KeepRejectsAndCheckDoNotGoTogether) {
  const RunResult r =
      run(with_patches(tmp / "patches", {"gen", "--ref", new_commit, "--keep-rejects", "--check"}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--keep-rejects"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace apexnpu::test
