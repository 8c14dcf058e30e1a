// The parser: both patch styles into one model, and every malformed input an error naming the
// patch line.
#include <gtest/gtest.h>

#include "core/error.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

using namespace std::string_literals;

std::string error_of(std::string_view text) {
  try {
    parse_patch(text, "p.patch");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Parser, DiffNurStyleWithTimestampsAndNewFiles) {
  const PatchSet set = parse_patch(
      "Only in b: junk\n"
      "diff -Nur a/x.py b/x.py\n"
      "--- a/x.py\t2021-06-01 10:00:00.000000000 +0800\n"
      "+++ b/x.py\t2021-06-02 10:00:00.000000000 +0800\n"
      "@@ -1,2 +1,2 @@\n-old\n+new\n same\n"
      "diff -Nur a/n.py b/n.py\n"
      "--- a/n.py\t1970-01-01 08:00:00.000000000 +0800\n"
      "+++ b/n.py\t2021-06-02 10:00:00.000000000 +0800\n"
      "@@ -0,0 +1 @@\n+created\n",
      "p.patch");
  ASSERT_EQ(set.files.size(), 2u);
  EXPECT_EQ(set.files[0].operation, FileOperation::modify);
  EXPECT_EQ(set.files[0].old_path, "x.py");
  EXPECT_EQ(set.files[0].hunks[0].lines.size(), 3u);
  EXPECT_EQ(set.files[1].operation, FileOperation::create);
  EXPECT_EQ(set.files[1].new_path, "n.py");
  EXPECT_EQ(set.files[1].patch_line, 10u);  // its "--- " line
}

TEST(Parser, GitStyleModesCreationAndDeletion) {
  const PatchSet set = parse_patch(
      "diff --git a/run.sh b/run.sh\nnew file mode 100755\nindex 0000000..1111111\n"
      "--- /dev/null\n+++ b/run.sh\n@@ -0,0 +1 @@\n+echo\n"
      "diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n"
      "@@ -1 +0,0 @@\n-x\n"
      "diff --git a/m.sh b/m.sh\nold mode 100644\nnew mode 100755\n",
      "p.patch");
  ASSERT_EQ(set.files.size(), 3u);
  EXPECT_EQ(set.files[0].operation, FileOperation::create);
  EXPECT_TRUE(set.files[0].executable);
  EXPECT_EQ(set.files[1].operation, FileOperation::remove);
  EXPECT_EQ(set.files[1].old_path, "gone.py");
  EXPECT_TRUE(set.files[2].mode_changed);
  EXPECT_TRUE(set.files[2].executable);
  EXPECT_TRUE(set.files[2].hunks.empty());
}

TEST(Parser, KeepsCrlfAndNoNewlineMarkers) {
  const PatchSet set = parse_patch(
      "--- a/w.cpp\n+++ b/w.cpp\n@@ -1,2 +1,2 @@\n-a\r\n+b\r\n last\n\\ No newline at end of file\n", "p");
  const auto& lines = set.files[0].hunks[0].lines;
  EXPECT_EQ(lines[0].text, "a\r\n");
  EXPECT_EQ(lines[1].text, "b\r\n");
  EXPECT_EQ(lines[2].text, "last");
}

TEST(Parser, EmptyPatchIsEmptyAndGarbageIsAnError) {
  EXPECT_TRUE(parse_patch("", "p").files.empty());
  EXPECT_TRUE(parse_patch("\n \n", "p").files.empty());
  EXPECT_NE(error_of("hello\nworld\n").find("only garbage"), std::string::npos);
}

TEST(Parser, MalformedInputNamesThePatchLine) {
  EXPECT_NE(error_of("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\nzzz\n").find("p.patch:6"),
            std::string::npos);
  EXPECT_NE(error_of("--- a/x\n+++ b/x\n@@ -1,999999999999 +1 @@\n-a\n").find("p.patch:3"),
            std::string::npos);
  EXPECT_NE(error_of("--- a/x\n+++ b/x\n@@ -1,5 +1,5 @@\n-a\n+b\n").find("p.patch:3"), std::string::npos);
  EXPECT_NE(error_of("--- a/x\n+++ b/x\n@@ -1 +1 @\n-a\n+b\n").find("p.patch:3: a malformed hunk header"),
            std::string::npos);
  EXPECT_NE(error_of("--- a/x\0y\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"s).find("p.patch:1: a NUL"),
            std::string::npos);
  EXPECT_NE(error_of("diff -Nur a/b b/b\nBinary files a/b and b/b differ\n").find("p.patch:2: binary"),
            std::string::npos);
  EXPECT_NE(error_of("diff --git a/b b/b\nGIT binary patch\nliteral 1\n").find("binary"), std::string::npos);
  EXPECT_NE(error_of("@@ -1 +1 @@\n-a\n+b\n").find("without a file header"), std::string::npos);
}

TEST(Parser, RefusesUnsafePathsAfterStripping) {
  auto with_path = [](const std::string& p) {
    return error_of("--- /dev/null\n+++ " + p + "\n@@ -0,0 +1 @@\n+x\n");
  };
  EXPECT_NE(with_path("b/../x").find("'..'"), std::string::npos);
  EXPECT_NE(with_path("b//etc/passwd").find("absolute"), std::string::npos);
  EXPECT_NE(with_path("b/.git/hooks/pre-commit").find(".git"), std::string::npos);
  EXPECT_NE(with_path("b/x/./y").find("'.'"), std::string::npos);
  EXPECT_NE(with_path("nocomponent").find("cannot strip"), std::string::npos);
  std::string deep = "b/";
  for (int i = 0; i < 1200; ++i) deep += "d/";
  EXPECT_NE(with_path(deep + "f").find("too deep"), std::string::npos);
  EXPECT_NE(
      error_of("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/tmp\n")
          .find("symlink"),
      std::string::npos);
}

TEST(Parser, SeveralSectionsForOneFileAreKeptInOrder) {
  // A concatenated series (issue 13): no longer "patched twice"; the applier takes them in order.
  const PatchSet set = parse_patch(
      "--- /dev/null\n+++ b/t\n@@ -0,0 +1 @@\n+x\n--- a/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n", "p.patch");
  ASSERT_EQ(set.files.size(), 2u);
  EXPECT_EQ(set.files[0].operation, FileOperation::create);
  EXPECT_EQ(set.files[1].operation, FileOperation::remove);
  EXPECT_EQ(set.files[1].patch_line, 5u);
}

}  // namespace
}  // namespace apexnpu::patch
