// What the parser accepts as GNU patch does: leading commentary, a bare empty line standing for
// an empty context line, and diff -N's epoch timestamps for created and removed files; and
// what it refuses clearly: renames.
#include <gtest/gtest.h>

#include "core/error.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

TEST(ParserLeniency, CommentaryBeforeTheFirstDiffIsSkipped) {
  const PatchSet set =
      parse_patch("Subject: fix\n\nSome prose.\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "c.patch");
  ASSERT_EQ(set.files.size(), 1u);
  EXPECT_EQ(set.files[0].new_path, "x");
  EXPECT_EQ(set.files[0].hunks[0].patch_line, 6u);
}

TEST(ParserLeniency, ABareNewlineIsAnEmptyContextLine) {
  const PatchSet set = parse_patch("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-c\n+d\n", "n.patch");
  const auto& lines = set.files[0].hunks[0].lines;
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[1].kind, LineKind::context);
  EXPECT_EQ(lines[1].text, "\n");
  FileTree tree;
  tree["x"] = FileEntry{"a\n\nc\n", FileKind::regular};
  const ApplyResult result = apply_patch(set, tree);
  ASSERT_TRUE(result.ok) << result.rejects;
  EXPECT_EQ(result.tree.at("x").content, "a\n\nd\n");
}

TEST(ParserLeniency, EpochTimestampsMarkCreatedAndRemovedFiles) {
  const PatchSet set = parse_patch(
      "diff -Nur a/n b/n\n--- a/n\t1970-01-01 00:00:00.000000000 +0000\n+++ b/n\t2021-01-01 "
      "00:00:00.000000000 +0800\n"
      "@@ -0,0 +1 @@\n+x\n"
      "diff -Nur a/r b/r\n--- a/r\t2021-01-01 00:00:00.000000000 +0800\n+++ b/r\t1970-01-01 "
      "08:00:00.000000000 +0800\n"
      "@@ -1 +0,0 @@\n-y\n",
      "e.patch");
  ASSERT_EQ(set.files.size(), 2u);
  EXPECT_EQ(set.files[0].operation, FileOperation::create);
  EXPECT_EQ(set.files[1].operation, FileOperation::remove);
}

TEST(ParserLeniency, RenamesAreRefusedNamingTheFirstRenameLine) {
  try {
    parse_patch("diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n", "r.patch");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("r.patch:2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace apexnpu::patch
