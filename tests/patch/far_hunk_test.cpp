// Hunks whose header names a line far beyond the end of the file (found by apply_patch_fuzzer:
// the offset search walked every line number down to the file). GNU searches outwards from the
// named line and finds the context near the end; we start where a match is possible and must
// find the same place, or fail where GNU fails.
#include <gtest/gtest.h>

#include "gnu_patch_run.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

const std::string six_lines = "l1\nl2\nl3\nl4\nl5\nl6\n";

SideBySide far(const std::string& name, const std::string& hunks) {
  test::TempDir tmp;
  return expect_same_as_gnu(tmp, name, FileTree{{"f", {six_lines}}}, "--- a/f\n+++ b/f\n" + hunks);
}

TEST(FarHunk, ContextNearTheEndIsFoundFromTheLargestLineNumber) {
  const SideBySide both = far("end", "@@ -99999999,3 +99999999,3 @@\n l4\n-l5\n+L5\n l6\n");
  EXPECT_EQ(both.gnu.exit_code, 0) << both.gnu.said;
  EXPECT_TRUE(both.we_applied);
}

TEST(FarHunk, ContextAtTheTopIsFoundToo) {
  const SideBySide both = far("top", "@@ -50000000,3 +50000000,3 @@\n l1\n-l2\n+L2\n l3\n");
  EXPECT_EQ(both.gnu.exit_code, 0) << both.gnu.said;
}

TEST(FarHunk, ContextThatIsNowhereFailsAsInGnu) {
  const SideBySide both = far("nowhere", "@@ -70000000,3 +70000000,3 @@\n x1\n-x2\n+X2\n x3\n");
  EXPECT_EQ(both.gnu.exit_code, 1) << both.gnu.said;
  EXPECT_FALSE(both.we_applied);
}

TEST(FarHunk, AHunkLongerThanTheFileAppliesWithFuzzOrFailsAsInGnu) {
  // Fuzz 2 drops l1 and l8 from the pattern: the rest sits at line 1 (GNU: "with fuzz 2").
  const SideBySide fuzzed =
      far("long", "@@ -80000000,8 +80000000,8 @@\n l1\n l2\n l3\n-l4\n+L4\n l5\n l6\n l7\n l8\n");
  EXPECT_EQ(fuzzed.gnu.exit_code, 0) << fuzzed.gnu.said;
  EXPECT_TRUE(fuzzed.we_applied);
  // With l0 first the pattern does not fit the six lines even with fuzz 2.
  const SideBySide failed =
      far("longer", "@@ -80000000,8 +80000000,8 @@\n l0\n l1\n l2\n l3\n-l4\n+L4\n l5\n l6\n l7\n");
  EXPECT_EQ(failed.gnu.exit_code, 1) << failed.gnu.said;
  EXPECT_FALSE(failed.we_applied);
}

TEST(FarHunk, TheFuzzerInputTwoHunksOneFarAppliesAsInGnu) {
  // The shape of the input that timed out: a far hunk of short context, then one at the top.
  far("two", "@@ -81051004,3 +5,3 @@\n l3\n-l4\n+L4\n l5\n@@ -1,3 +1,3 @@\n l1\n-l2\n+L2\n l3\n");
}

}  // namespace
}  // namespace apexnpu::patch
