// The writer's fixed style: git headers, no timestamps, sorted paths, 3 lines of context.
#include <gtest/gtest.h>

#include "core/error.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

std::string lines(int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += "l" + std::to_string(i) + "\n";
  return s;
}

TEST(Writer, OneChangeWithThreeLinesOfContext) {
  std::string changed = lines(1, 10);
  changed.replace(changed.find("l5\n"), 3, "L5\n");
  EXPECT_EQ(
      write_patch({{"f", {lines(1, 10)}}}, {{"f", {changed}}}, {"f"}),
      "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+L5\n l6\n l7\n l8\n");
}

TEST(Writer, NearbyChangesShareAHunkAndFarOnesDoNot) {
  std::string near = lines(1, 30), far = lines(1, 30);
  near.replace(near.find("l5\n"), 3, "X\n");
  near.replace(near.find("l11\n"), 4, "Y\n");
  far.replace(far.find("l5\n"), 3, "X\n");
  far.replace(far.find("l20\n"), 4, "Y\n");
  const std::string a = write_patch({{"f", {lines(1, 30)}}}, {{"f", {near}}}, {"f"});
  const std::string b = write_patch({{"f", {lines(1, 30)}}}, {{"f", {far}}}, {"f"});
  EXPECT_EQ(std::count(a.begin(), a.end(), '@'), 4);
  EXPECT_EQ(std::count(b.begin(), b.end(), '@'), 8);
}

TEST(Writer, NewDeletedModeChangedAndNoNewlineFiles) {
  const FileTree before{{"gone", {"x\n"}}, {"m", {"echo\n"}}, {"t", {"a\nb"}}};
  const FileTree after{
      {"m", {"echo\n", FileKind::executable}}, {"n", {"new\n", FileKind::executable}}, {"t", {"a\nc"}}};
  EXPECT_EQ(
      write_patch(before, after, {"t", "n", "m", "gone"}),
      "diff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
      "diff --git a/m b/m\nold mode 100644\nnew mode 100755\n"
      "diff --git a/n b/n\nnew file mode 100755\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new\n"
      "diff --git a/t b/t\n--- a/t\n+++ b/t\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n"
      "+c\n\\ No newline at end of file\n");
}

TEST(Writer, SymlinksAreRefused) {
  EXPECT_THROW(write_patch({{"l", {"a", FileKind::symlink}}}, {{"l", {"b", FileKind::symlink}}}, {"l"}),
               Error);
}

}  // namespace
}  // namespace apexnpu::patch
