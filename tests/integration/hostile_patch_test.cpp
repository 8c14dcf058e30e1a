// Hostile and malformed patches through `apexnpu gen --patch`: each is refused with a clear
// error, and nothing is written inside or outside the target.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

struct HostileCase {
  std::string name;
  std::string patch;
  std::vector<std::string> any_of;  // the error names one of these (case-insensitive)
  std::string where = {};           // and, when given, the patch file and line: "hostile.patch:N"
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string deep_path(int levels) {
  std::string p;
  for (int i = 0; i < levels; ++i) p += "d/";
  return p + "f.py";
}

const std::string good_file =
    "--- a/README\n+++ b/README\n@@ -1,2 +1,2 @@\n-readme line 1\n+npu readme line 1\n readme line 2\n";

std::vector<HostileCase> hostile_cases() {
  using namespace std::string_literals;
  return {
      {"DotDot", "--- a/../escape.py\n+++ b/../escape.py\n@@ -0,0 +1 @@\n+x\n", {".."}},
      {"Absolute", "--- /dev/null\n+++ b//tmp/apexnpu-escape.py\n@@ -0,0 +1 @@\n+x\n", {"absolute"}},
      {"ThroughSymlinkedDirectory",
       "--- /dev/null\n+++ b/apex/outside/pwn.py\n@@ -0,0 +1 @@\n+x\n",
       {"symlink"}},
      {"WriteToSymlink", "--- a/apex/link.py\n+++ b/apex/link.py\n@@ -1 +1 @@\n-x\n+y\n", {"symlink"}},
      {"CreatesSymlinkThenWritesThroughIt",
       "diff --git a/lnk b/lnk\nnew file mode 120000\n--- /dev/null\n+++ b/lnk\n@@ -0,0 +1 @@\n"
       "+/tmp\n\\ No newline at end of file\n"
       "diff --git a/lnk/x b/lnk/x\nnew file mode 100644\n--- /dev/null\n+++ b/lnk/x\n@@ -0,0 +1 @@\n+x\n",
       {"symlink"}},
      {"CountsDoNotMatch",
       "--- a/README\n+++ b/README\n@@ -1,3 +1,3 @@\n-readme line 1\n+x\n readme line 2\n" + good_file,
       {"line"}},
      {"HugeCount",
       "--- a/README\n+++ b/README\n@@ -1,999999999999 +1 @@\n-readme line 1\n+x\n",
       {"line", "count"}},
      {"TruncatedHunk", "--- a/README\n+++ b/README\n@@ -1,5 +1,5 @@\n-readme line 1\n+x\n", {"line"}},
      {"NulInHeader", "--- a/READ\0ME\n+++ b/READ\0ME\n@@ -1 +1 @@\n-x\n+y\n"s, {"nul"}},
      {"BinaryDiff", "diff -Nur a/bin b/bin\nBinary files a/bin and b/bin differ\n", {"binary"}},
      {"GitBinaryPatch",
       "diff --git a/bin b/bin\nnew file mode 100644\nGIT binary patch\nliteral 3\nKcmZ?wV*mgF0RRC2\n\n",
       {"binary"}},
      {"GarbageOnly", "this is not a patch\nat all\n", {"garbage", "no diff", "not a patch"}},
      {"CreateTheSameFileTwice",
       "--- /dev/null\n+++ b/twice.py\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/twice.py\n@@ -0,0 +1 @@\n+y\n",
       {"twice", "more than once", "same file", "already"}},
      {"QuotedDotDot", "--- /dev/null\n+++ \"b/..\\057outside/evil.txt\"\n@@ -0,0 +1 @@\n+x\n", {".."}},
      {"MalformedQuotedName",
       "--- a/README\n+++ \"b/READ\\qME\"\n@@ -1 +1 @@\n-x\n+y\n",
       {"quoted"},
       "hostile.patch:2"},
      {"NoNewlineMarkerInsideAHunk",
       "--- a/README\n+++ b/README\n@@ -1,2 +1,2 @@\n-readme line 1\n\\ No newline at end of file\n"
       "+x\n readme line 2\n",
       {"malformed"},
       "hostile.patch:5"},
      {"ContextOnlyHunk",
       "--- a/README\n+++ b/README\n@@ -1,2 +1,2 @@\n readme line 1\n readme line 2\n",
       {"malformed"},
       "hostile.patch:3"},
      {"MisorderedHunks",
       "--- a/README\n+++ b/README\n@@ -4 +4 @@\n-readme line 4\n+x\n@@ -1,2 +1,2 @@\n-readme line 1\n+y\n"
       " readme line 2\n",
       {"misordered"},
       "hostile.patch:6"},
      {"DeletionDiffers",
       "--- a/README\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-not what the file says\n-readme line 2\n",
       {"README"}},
      {"GitHooksTarget", "--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+rm -rf /\n", {".git"}},
      {"NulInFileName", "diff --git a/a\0b b/a\0b\n--- a/a\0b\n+++ b/a\0b\n@@ -0,0 +1 @@\n+x\n"s, {"nul"}},
      {"DeepPath",
       "--- /dev/null\n+++ b/" + deep_path(1200) + "\n@@ -0,0 +1 @@\n+x\n",
       {"deep", "long", "component"}},
      {"TruncatedAfterGoodFiles",
       good_file +
           "--- a/apex/amp/frontend.py\n+++ b/apex/amp/frontend.py\n@@ -1,4 +1,4 @@\n frontend line 1\n",
       {"line"}},
  };
}

class HostilePatchTest : public ::testing::TestWithParam<HostileCase> {};

TEST_P(HostilePatchTest, IsRefusedAndNothingIsWritten) {
  const HostileCase& c = GetParam();
  TempDir tmp;
  FixtureRepo repo(tmp / "upstream");
  repo.write("README", numbered_lines("readme", 5));
  repo.write("apex/amp/frontend.py", numbered_lines("frontend", 10));
  stdfs::create_directories(tmp / "outside");
  repo.symlink("apex/outside", (tmp / "outside").string());
  repo.symlink("apex/link.py", "../README");
  repo.commit("upstream");
  write_file(tmp / "hostile.patch", c.patch);

  const stdfs::path out = tmp / "out";
  const RunResult r = run_apexnpu({"gen", "--upstream", repo.dir().string(), "--ref", "HEAD", "--patch",
                                   (tmp / "hostile.patch").string(), "--no-overlay", "-o", out.string()},
                                  tmp / "home");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string err = lower(r.err);
  bool named = false;
  for (const auto& word : c.any_of) named |= err.find(lower(word)) != std::string::npos;
  EXPECT_TRUE(named) << "error should name one of the expected causes: " << r.err;
  if (!c.where.empty()) {
    EXPECT_NE(r.err.find(c.where), std::string::npos) << "the patch file and line: " << r.err;
  }
  EXPECT_FALSE(stdfs::exists(out)) << "no output may be created";
  EXPECT_TRUE(stdfs::is_empty(tmp / "outside")) << "nothing written through the symlink";
  EXPECT_FALSE(stdfs::exists("/tmp/apexnpu-escape.py"));
  EXPECT_FALSE(stdfs::exists(tmp / "escape.py"));
  EXPECT_EQ(read_file(repo.dir() / "README"), numbered_lines("readme", 5)) << "input untouched";
}

INSTANTIATE_TEST_SUITE_P(Cases, HostilePatchTest, ::testing::ValuesIn(hostile_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(EmptyPatch, IsANoOp) {
  TempDir tmp;
  FixtureRepo repo(tmp / "upstream");
  repo.write("README", numbered_lines("readme", 5));
  repo.write("tools/run.sh", "#!/bin/sh\n", true);
  repo.commit("upstream");
  write_file(tmp / "empty.patch", "");
  const RunResult r =
      run_apexnpu({"gen", "--upstream", repo.dir().string(), "--ref", "HEAD", "--patch",
                   (tmp / "empty.patch").string(), "--no-overlay", "-o", (tmp / "out").string()},
                  tmp / "home");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::string> expected = tree_snapshot(repo.dir());
  std::erase_if(expected, [](const auto& kv) { return kv.first.starts_with(".git"); });
  EXPECT_EQ(tree_snapshot(tmp / "out"), expected);
}

}  // namespace
}  // namespace apexnpu::test
