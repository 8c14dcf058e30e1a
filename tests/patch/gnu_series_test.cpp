// Several sections for one file (a concatenated patch series, `cat 0001.patch 0002.patch`),
// side by side with GNU patch: each section applies to the result of the ones before, as GNU
// applies them; what GNU refuses (a file created twice, a deleted file modified) we refuse.
#include <gtest/gtest.h>

#include "core/error.h"
#include "gnu_patch_run.h"
#include "patch/lines.h"
#include "patch/patch_engine.h"
#include "random_lines.h"

namespace apexnpu::patch {
namespace {

const FileTree eight_lines{{"f", {"l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"}}};

SideBySide series(const std::string& name, const FileTree& tree, const std::string& patch_text) {
  test::TempDir tmp;
  return expect_same_as_gnu(tmp, name, tree, patch_text);
}

TEST(PatchSeries, CreateThenModify) {
  const SideBySide both = series("cm", {},
                                 "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n"
                                 "--- a/n\n+++ b/n\n@@ -1,2 +1,2 @@\n x\n-y\n+Y\n");
  EXPECT_EQ(both.gnu.exit_code, 0);
  EXPECT_EQ(both.our_files.at("n"), "x\nY\n");
}

TEST(PatchSeries, ModifyThenDelete) {
  const SideBySide both =
      series("md", eight_lines,
             "--- a/f\n+++ b/f\n@@ -1,3 +1,2 @@\n l1\n-l2\n l3\n"
             "--- a/f\n+++ /dev/null\n@@ -1,7 +0,0 @@\n-l1\n-l3\n-l4\n-l5\n-l6\n-l7\n-l8\n");
  EXPECT_EQ(both.gnu.exit_code, 0);
  EXPECT_FALSE(both.our_files.contains("f"));
}

TEST(PatchSeries, ModifyTwiceAsGitFormatPatchesWriteIt) {
  const SideBySide both =
      series("mm", eight_lines,
             "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-l1\n+L1\n l2\n l3\n"
             "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n L1\n-l2\n+L2\n l3\n");
  EXPECT_EQ(both.gnu.exit_code, 0);
  EXPECT_EQ(both.our_files.at("f"), "L1\nL2\nl3\nl4\nl5\nl6\nl7\nl8\n");
}

TEST(PatchSeries, CreateThenDelete) {
  const SideBySide both = series("cd", eight_lines,
                                 "--- /dev/null\n+++ b/t\n@@ -0,0 +1 @@\n+x\n"
                                 "--- a/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
  EXPECT_EQ(both.gnu.exit_code, 0);
  EXPECT_FALSE(both.our_files.contains("t"));
}

TEST(PatchSeries, ModeChangeThenEdit) {
  const SideBySide both = series("me", eight_lines,
                                 "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n"
                                 "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -8 +8 @@\n-l8\n+L8\n");
  EXPECT_EQ(both.gnu.exit_code, 0);
  EXPECT_EQ(both.our_files.at("f").front(), '*');
}

TEST(PatchSeries, CreatingAFileTwiceIsRefusedAsGnuRefusesIt) {
  const SideBySide both = series("cc", {},
                                 "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n"
                                 "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+y\n");
  EXPECT_NE(both.gnu.exit_code, 0);
}

TEST(PatchSeries, ModifyingADeletedFileIsRefusedAsGnuRefusesIt) {
  const SideBySide both = series("dm", {{"t", {"x\n"}}},
                                 "--- a/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
                                 "--- a/t\n+++ b/t\n@@ -1 +1 @@\n-x\n+y\n");
  EXPECT_NE(both.gnu.exit_code, 0);
}

TEST(PatchSeries, ASecondSectionThatFailsKeepsTheFirstAsGnuDoes) {
  const SideBySide both = series("sf", eight_lines,
                                 "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-l1\n+L1\n l2\n l3\n"
                                 "--- a/f\n+++ b/f\n@@ -5,3 +5,3 @@\n-q5\n+Q5\n l6\n l7\n");
  EXPECT_EQ(both.gnu.exit_code, 1);
  EXPECT_EQ(both.our_files, both.gnu.files);
}

// Random files through three versions; the two patches between them, concatenated, applied to
// the first version (or to an edited copy, so sections land at offsets or fail) by GNU and us.
TEST(PatchSeries, RandomSeriesApplyAsGnuPatchAppliesThem) {
  test::TempDir tmp;
  CaseMaker make(131313);
  int applied = 0, failed = 0;
  for (int n = 0; n < 120; ++n) {
    FileTree v0, v1, v2;
    for (const std::string path : {"a", "d/b"}) {
      std::vector<std::string> lines = make.file(0, 30);
      if (make.pick(0, 5) != 0) v0[path] = {join(lines)};
      make.edit(lines, 3);
      if (make.pick(0, 5) != 0) v1[path] = {join(lines)};
      make.edit(lines, 3);
      if (make.pick(0, 5) != 0) v2[path] = {join(lines)};
    }
    const std::vector<std::string> paths{"a", "d/b"};
    std::string text;
    try {
      text = write_patch(v0, v1, paths) + write_patch(v1, v2, paths);
    } catch (const Error&) {
      continue;  // an empty file deleted: the writer refuses it
    }
    if (text.empty()) continue;
    FileTree input = v0;
    if (n % 3 == 0 && input.contains("a")) {
      std::vector<std::string> lines;
      for (const std::string_view line : split_lines(input["a"].content)) lines.emplace_back(line);
      make.edit(lines, 2);
      input["a"].content = join(lines);
    }
    std::string name = "s";
    name += std::to_string(n);
    const SideBySide both = expect_same_as_gnu(tmp, name, input, text);
    if (n % 3 != 0) {
      EXPECT_EQ(both.our_files, snapshot_of(v2)) << text;
    }
    (both.gnu.exit_code == 0 ? applied : failed)++;
    test::stdfs::remove_all(tmp / name);
  }
  EXPECT_GT(applied, 50);
}

}  // namespace
}  // namespace apexnpu::patch
