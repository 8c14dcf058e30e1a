// The applier: exact, offset and fuzz placement, failures with rejects, all or nothing, and
// refusing symlinks.
#include <gtest/gtest.h>

#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

std::string lines(int from, int to, const std::string& prefix = "l") {
  std::string s;
  for (int i = from; i <= to; ++i) s += prefix + std::to_string(i) + "\n";
  return s;
}

ApplyResult apply_text(const std::string& patch, const FileTree& tree) {
  return apply_patch(parse_patch(patch, "p"), tree);
}

const std::string change_l5 = "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n";

TEST(Applier, CleanOffsetForwardAndBackward) {
  const FileTree exact{{"f", {lines(1, 10)}}};
  ApplyResult r = apply_text(change_l5, exact);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.files[0].status, FileStatus::clean);
  EXPECT_EQ(r.tree.at("f").content, lines(1, 4) + "L5\n" + lines(6, 10));

  const FileTree shifted{{"f", {"x\ny\n" + lines(1, 10)}}};
  r = apply_text(change_l5, shifted);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.files[0].status, FileStatus::offset);
  EXPECT_EQ(r.files[0].hunks[0].offset, 2);

  const FileTree earlier{{"f", {lines(2, 10)}}};
  r = apply_text(change_l5, earlier);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.files[0].hunks[0].offset, -1);
}

TEST(Applier, FuzzDropsOuterContextAndKeepsTheInputsLines) {
  std::string input = lines(1, 10);
  input.replace(input.find("l2\n"), 3, "changed2\n");
  ApplyResult r = apply_text(change_l5, FileTree{{"f", {input}}});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.files[0].status, FileStatus::fuzz);
  EXPECT_EQ(r.files[0].hunks[0].fuzz, 1);
  EXPECT_NE(r.tree.at("f").content.find("changed2\n"), std::string::npos);

  input.replace(input.find("l3\n"), 3, "changed3\n");
  r = apply_text(change_l5, FileTree{{"f", {input}}});
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.files[0].hunks[0].fuzz, 2);

  input.replace(input.find("l4\n"), 3, "changed4\n");
  r = apply_text(change_l5, FileTree{{"f", {input}}});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.files[0].status, FileStatus::failed);
  EXPECT_NE(r.rejects.find("@@ -2,7 +2,7 @@"), std::string::npos);
  EXPECT_NE(r.rejects.find("+L5"), std::string::npos);
}

TEST(Applier, AllOrNothingWhenTheLastFileFails) {
  const FileTree tree{{"a", {lines(1, 10)}}, {"f", {lines(1, 3)}}};
  const std::string patch = "--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n-l1\n+L1\n l2\n l3\n" + change_l5;
  const ApplyResult r = apply_text(patch, tree);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.files[0].status, FileStatus::clean);
  EXPECT_EQ(r.files[1].status, FileStatus::failed);
}

TEST(Applier, DeletionMustMatchTheWholeFile) {
  const std::string del = "--- a/f\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-l1\n-l2\n";
  ApplyResult r = apply_text(del, FileTree{{"f", {lines(1, 2)}}});
  ASSERT_TRUE(r.ok);
  EXPECT_FALSE(r.tree.contains("f"));
  r = apply_text(del, FileTree{{"f", {lines(1, 3)}}});
  EXPECT_FALSE(r.ok);
  r = apply_text(del, FileTree{{"f", {"l1\nother\n"}}});
  EXPECT_FALSE(r.ok);
}

TEST(Applier, CreationOfAnExistingFileFails) {
  const ApplyResult r = apply_text("--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+x\n", FileTree{{"f", {"x\n"}}});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.files[0].hunks[0].reason.find("already exists"), std::string::npos);
}

TEST(Applier, RefusesSymlinkTargetsAndParents) {
  const FileTree tree{
      {"link", {"f", FileKind::symlink}}, {"dir", {"/tmp", FileKind::symlink}}, {"f", {lines(1, 10)}}};
  ApplyResult r = apply_text("--- a/link\n+++ b/link\n@@ -1 +1 @@\n-f\n+g\n", tree);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.files[0].hunks[0].reason.find("symlink"), std::string::npos);
  r = apply_text("--- /dev/null\n+++ b/dir/x\n@@ -0,0 +1 @@\n+x\n", tree);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.files[0].hunks[0].reason.find("symlink"), std::string::npos);
  r = apply_text("--- /dev/null\n+++ b/f/x\n@@ -0,0 +1 @@\n+x\n", tree);
  EXPECT_FALSE(r.ok);
}

TEST(Applier, ModesFromGitHeaders) {
  const FileTree tree{{"s", {"echo\n"}}};
  ApplyResult r = apply_text("diff --git a/s b/s\nold mode 100644\nnew mode 100755\n", tree);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.tree.at("s").kind, FileKind::executable);
  r = apply_text("diff --git a/n b/n\nnew file mode 100755\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n",
                 tree);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.tree.at("n").kind, FileKind::executable);
}

}  // namespace
}  // namespace apexnpu::patch
