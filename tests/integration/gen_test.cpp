// apexnpu gen on a fixture upstream: results equal GNU patch's, reports, --check, --json,
// failures that leave nothing behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class GenTest : public ::testing::Test {
 protected:
  GenTest() : upstream(tmp.path()) {
    // The NPU edits, made against the first commit, as Ascend writes them: diff -Nur a b.
    copy_work_tree(upstream.at_first, tmp / "diff" / "a");
    copy_work_tree(upstream.at_first, tmp / "diff" / "b");
    const stdfs::path b = tmp / "diff" / "b";
    std::string init = read_file(b / "apex/__init__.py");
    init.replace(init.find("init line 10\n"), 13, "init line 10 for the NPU\n");
    write_file(b / "apex/__init__.py", init);
    std::string frontend = read_file(b / "apex/amp/frontend.py");
    frontend.replace(frontend.find("frontend line 30\n"), 17, "npu line 30\nnpu extra\n");
    frontend.replace(frontend.find("frontend line 50\n"), 17, "");
    write_file(b / "apex/amp/frontend.py", frontend);
    std::string crlf = read_file(b / "csrc/windows.cpp");
    crlf.replace(crlf.find("crlf line 15\r\n"), 14, "crlf line 15 npu\r\n");
    write_file(b / "csrc/windows.cpp", crlf);
    std::string script = read_file(b / "tools/build.sh");
    script += "echo npu\n";
    write_file(b / "tools/build.sh", script, true);
    write_file(b / "README", numbered_lines("readme", 10) + "last line, still without newline");
    write_file(b / "apex/npu/device.py", "import torch\n");
    stdfs::remove(b / "apex/optimizers/__init__.py");
    write_file(patch_file, gnu_diff(tmp / "diff", "a", "b"));
    write_file(tmp / "overlay" / "apex/npu/extra.py", "EXTRA = 1\n");
    write_file(tmp / "overlay" / ".keep", "");
  }

  RunResult gen(std::vector<std::string> args) {
    std::vector<std::string> all{"gen",
                                 "--upstream",
                                 upstream.repo.dir().string(),
                                 "--patch",
                                 patch_file.string(),
                                 "--overlay",
                                 (tmp / "overlay").string()};
    all.insert(all.end(), args.begin(), args.end());
    return run_apexnpu(all, tmp / "home");
  }

  // What GNU patch -p1 makes of the same patch on the same files, plus the overlay.
  std::map<std::string, std::string> gnu_result(const stdfs::path& tree_at_ref) {
    const stdfs::path dir = tmp / "gnu";
    stdfs::remove_all(dir);
    copy_work_tree(tree_at_ref, dir);
    EXPECT_EQ(gnu_patch(dir, patch_file), 0);
    write_file(dir / "apex/npu/extra.py", "EXTRA = 1\n");
    return tree_snapshot(dir);
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  stdfs::path patch_file = tmp / "npu.patch";
};

TEST_F(GenTest, CleanApplyEqualsGnuPatch) {
  const stdfs::path out = tmp / "out";
  const RunResult r = gen({"--ref", upstream.first, "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(tree_snapshot(out), gnu_result(upstream.at_first));
  EXPECT_NE(r.out.find("clean"), std::string::npos) << r.out;
  EXPECT_FALSE(stdfs::exists(tmp / "out.rej"));
}

TEST_F(GenTest, TagsAndShortShasResolveToTheSameTree) {
  ASSERT_EQ(gen({"--ref", "v1", "-o", (tmp / "by-tag").string()}).exit_code, 0);
  ASSERT_EQ(gen({"--ref", "v1-light", "-o", (tmp / "by-light-tag").string()}).exit_code, 0);
  ASSERT_EQ(gen({"--ref", upstream.first.substr(0, 8), "-o", (tmp / "by-short").string()}).exit_code, 0);
  EXPECT_EQ(tree_snapshot(tmp / "by-tag"), tree_snapshot(tmp / "by-light-tag"));
  EXPECT_EQ(tree_snapshot(tmp / "by-tag"), tree_snapshot(tmp / "by-short"));
}

TEST_F(GenTest, OffsetAndFuzzEqualGnuPatchAndAreReported) {
  const stdfs::path out = tmp / "out";
  const RunResult r = gen({"--ref", "dev", "-o", out.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(tree_snapshot(out), gnu_result(upstream.at_second));

  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["upstream"]["commit"], upstream.second);
  std::map<std::string, std::string> status;
  for (const auto& f : doc["files"]) status[f["path"]] = f["status"];
  EXPECT_EQ(status["apex/amp/frontend.py"], "offset");
  EXPECT_EQ(status["apex/__init__.py"], "fuzz");
  EXPECT_EQ(status["csrc/windows.cpp"], "clean");
  for (const auto& f : doc["files"]) {
    if (f["path"] != "apex/amp/frontend.py") continue;
    for (const auto& h : f["hunks"]) EXPECT_EQ(h["offset"], 7);
  }
}

TEST_F(GenTest, CheckAppliesInMemoryAndWritesNothing) {
  const stdfs::path out = tmp / "out";
  const RunResult r = gen({"--ref", "dev", "-o", out.string(), "--check"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(stdfs::exists(out));
  EXPECT_NE(r.out.find("checked"), std::string::npos) << r.out;
}

TEST_F(GenTest, JsonIsOneDocumentDescribingTheResult) {
  const RunResult r = gen({"--ref", upstream.first, "-o", (tmp / "out").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["command"], "gen");
  EXPECT_EQ(doc["ok"], true);
  EXPECT_EQ(doc["upstream"]["read_in_place"], true);
  EXPECT_EQ(doc["overlay_files"], nlohmann::json::array({"apex/npu/extra.py"}));
  EXPECT_EQ(doc["files"].size(), 7u);
  EXPECT_TRUE(doc["timings"].contains("apply_patch"));
}

TEST_F(GenTest, RefusesANonEmptyOutputUnlessForced) {
  const stdfs::path out = tmp / "out";
  write_file(out / "precious.txt", "keep me\n");
  const RunResult refused = gen({"--ref", upstream.first, "-o", out.string()});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("not empty"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
  EXPECT_EQ(read_file(out / "precious.txt"), "keep me\n");

  const RunResult forced = gen({"--ref", upstream.first, "-o", out.string(), "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(tree_snapshot(out), gnu_result(upstream.at_first));
}

TEST_F(GenTest, AFailedHunkWritesNothingAndReportsEveryFailedHunk) {
  // One context line of the frontend.py hunk next to the change no longer exists anywhere in
  // the file, so neither an offset nor fuzz 2 can place it.
  std::string patch = read_file(patch_file);
  const std::string context = " frontend line 29\n";
  patch.replace(patch.find(context), context.size(), " nowhere 2\n");
  write_file(patch_file, patch);
  const stdfs::path out = tmp / "out";
  write_file(out / "old.txt", "an earlier output\n");

  const RunResult r = gen({"--ref", upstream.first, "-o", out.string(), "--force", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("apex/amp/frontend.py"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("@@ -27,7 +27,8 @@"), std::string::npos) << r.err;
  EXPECT_EQ(tree_snapshot(out), (std::map<std::string, std::string>{{"old.txt", "an earlier output\n"}}));
  ASSERT_TRUE(stdfs::exists(tmp / "out.rej"));
  EXPECT_NE(read_file(tmp / "out.rej").find("nowhere 2"), std::string::npos);

  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ok"], false);
  bool failed_listed = false;
  for (const auto& f : doc["files"]) failed_listed |= f["status"] == "failed";
  EXPECT_TRUE(failed_listed);
  // No temporary directory is left beside the output either.
  for (const auto& e : stdfs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename().string().find(".out."), std::string::npos) << e.path();
}

TEST_F(GenTest, AFailedHunkWithoutAnEarlierOutputCreatesNone) {
  write_file(patch_file,
             "--- a/README\n+++ b/README\n@@ -1,2 +1,2 @@\n-no such line\n+x\n no such line either\n");
  const RunResult r = gen({"--ref", upstream.first, "-o", (tmp / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(stdfs::exists(tmp / "out"));
}

TEST_F(GenTest, OverlayMayNotReplaceAnUpstreamFile) {
  write_file(tmp / "overlay" / "apex/amp/frontend.py", "replaced\n");
  const RunResult r = gen({"--ref", upstream.first, "-o", (tmp / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("apex/amp/frontend.py"), std::string::npos) << r.err;
  EXPECT_FALSE(stdfs::exists(tmp / "out"));
}

TEST_F(GenTest, NoOverlayAppliesThePatchAlone) {
  const stdfs::path out = tmp / "out";
  const RunResult r = run_apexnpu({"gen", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
                                   "--patch", patch_file.string(), "--no-overlay", "-o", out.string()},
                                  tmp / "home");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(stdfs::exists(out / "apex/npu/extra.py"));
  EXPECT_TRUE(stdfs::exists(out / "apex/npu/device.py"));
}

TEST_F(GenTest, AMalformedPatchFailsBeforeTheUpstreamIsCloned) {
  write_file(patch_file, "--- a/README\n+++ b/README\n@@ -1,2 +1,2 @@\n-one line only\n");
  const stdfs::path cache = tmp / "cache";
  const RunResult r = run_apexnpu({"gen", "--upstream", "file://" + upstream.repo.dir().string(), "--ref",
                                   upstream.first, "--clone-cache", cache.string(), "--patch",
                                   patch_file.string(), "--no-overlay", "-o", (tmp / "out").string()},
                                  tmp / "home");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("npu.patch:"), std::string::npos) << r.err;
  EXPECT_FALSE(stdfs::exists(cache / "repos")) << "the upstream was cloned for a patch that cannot apply";
  EXPECT_FALSE(stdfs::exists(tmp / "out"));
}

TEST_F(GenTest, UnknownRefIsAClearError) {
  const RunResult r = gen({"--ref", "no-such-branch", "-o", (tmp / "out").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no-such-branch"), std::string::npos) << r.err;
}

TEST(GenUsage, BadUsageExitsWithTwo) {
  TempDir tmp;
  EXPECT_EQ(run_apexnpu({"gen", "--no-such-option"}, tmp.path()).exit_code, 2);
  EXPECT_EQ(run_apexnpu({"make-patch"}, tmp.path()).exit_code, 2);  // --tree is required
  EXPECT_EQ(run_apexnpu({}, tmp.path()).exit_code, 2);
  const RunResult help = run_apexnpu({"gen", "--help"}, tmp.path());
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--upstream"), std::string::npos);
}

}  // namespace
}  // namespace apexnpu::test
