// Hunks of one file that go backwards, side by side with GNU patch: GNU fails such a hunk
// ("misordered hunks! output would be garbled") and so do we, keeping the hunks before it as GNU
// does; on random patches with their hunks shuffled, we fail and apply exactly where GNU does.
#include <gtest/gtest.h>

#include <algorithm>

#include "gnu_patch_run.h"
#include "patch/patch_engine.h"
#include "random_lines.h"

namespace apexnpu::patch {
namespace {

const std::string eight_lines = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n";

void expect_misordered(const std::string& hunks, std::size_t second_hunk_line) {
  test::TempDir tmp;
  const FileTree tree{{"f", {eight_lines}}};
  const std::string patch_text = "--- a/f\n+++ b/f\n" + hunks;
  const SideBySide both = expect_same_as_gnu(tmp, "m", tree, patch_text);
  EXPECT_EQ(both.gnu.exit_code, 1);
  EXPECT_NE(both.gnu.said.find("misordered hunks"), std::string::npos) << both.gnu.said;
  const ApplyResult ours = apply_patch(parse_patch(patch_text, "m.patch"), tree);
  ASSERT_EQ(ours.files[0].hunks.size(), 2u);
  EXPECT_EQ(ours.files[0].hunks[1].status, FileStatus::failed);
  EXPECT_NE(ours.files[0].hunks[1].reason.find("misordered"), std::string::npos);
  EXPECT_EQ(ours.files[0].hunks[1].patch_line, second_hunk_line) << "the failed hunk names its line";
  EXPECT_EQ(both.our_files, both.gnu.files) << "the hunk before it applied, as GNU leaves it";
}

TEST(MisorderedHunks, ABackwardHunkFailsAsInGnuPatch) {
  expect_misordered("@@ -5,3 +5,3 @@\n l5\n-l6\n+L6\n l7\n@@ -1,3 +1,3 @@\n l1\n-l2\n+L2\n l3\n", 8);
}

TEST(MisorderedHunks, AnAdditionBeforeAnEarlierChangeFails) {
  expect_misordered("@@ -5 +5 @@\n-l5\n+L5\n@@ -1,0 +2 @@\n+X\n", 6);
}

TEST(MisorderedHunks, TheSameHunkTwiceFails) {
  expect_misordered("@@ -4,3 +4,3 @@\n l4\n-l5\n+L5\n l6\n@@ -4,3 +4,3 @@\n l4\n-l5\n+L5\n l6\n", 8);
}

TEST(MisorderedHunks, OverlappingContextIsNotMisordered) {
  test::TempDir tmp;
  const SideBySide both = expect_same_as_gnu(
      tmp, "o", FileTree{{"f", {eight_lines}}},
      "--- a/f\n+++ b/f\n@@ -4,3 +4,3 @@\n l4\n-l5\n+L5\n l6\n@@ -5,3 +5,3 @@\n L5\n-l6\n+L6\n l7\n");
  EXPECT_EQ(both.gnu.exit_code, 0) << both.gnu.said;
}

// A patch's hunks, cut apart at their headers.
std::vector<std::string> split_hunks(const std::string& text, std::string& header) {
  std::vector<std::string> hunks;
  std::size_t at = text.find("\n@@ ");
  header = text.substr(0, at + 1);
  while (at != std::string::npos) {
    const std::size_t next = text.find("\n@@ ", at + 1);
    hunks.push_back(text.substr(at + 1, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  return hunks;
}

TEST(MisorderedHunks, ShuffledHunksOfRandomPatchesAsInGnuPatch) {
  test::TempDir tmp;
  CaseMaker make(1313);
  std::mt19937 shuffle(99);
  int refused = 0, applied = 0;
  for (int n = 0; n < 120; ++n) {
    const std::vector<std::string> original = make.file(20, 60);
    std::vector<std::string> edited = original;
    make.edit(edited, 6);
    const std::string text = write_patch({{"f", {join(original)}}}, {{"f", {join(edited)}}}, {"f"});
    std::string header;
    std::vector<std::string> hunks = split_hunks(text, header);
    if (hunks.size() < 2) continue;
    std::shuffle(hunks.begin(), hunks.end(), shuffle);
    std::string shuffled = header;
    for (const auto& h : hunks) shuffled += h;
    const std::string name = "case" + std::to_string(n);
    const SideBySide both = expect_same_as_gnu(tmp, name, FileTree{{"f", {join(original)}}}, shuffled);
    if (both.gnu.exit_code == 0) {
      ++applied;
    } else {
      EXPECT_EQ(both.our_files, both.gnu.files) << "the same partial result (GNU keeps what applied)";
      ++refused;
    }
    test::stdfs::remove_all(tmp / name);
  }
  EXPECT_GT(refused, 10);
  EXPECT_GT(applied, 3);
}

}  // namespace
}  // namespace apexnpu::patch
