// Hunks whose body does not fit their header, "\ No newline" markers in and after hunks, and
// hunks of context only, side by side with GNU patch: where GNU says "malformed patch" we refuse
// the patch naming its file and line; where GNU applies, we give the same bytes.
#include <gtest/gtest.h>

#include "gnu_patch_run.h"

namespace apexnpu::patch {
namespace {

const std::string eight_lines = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n";
const std::string no_newline = "\\ No newline at end of file\n";

struct HunkCase {
  std::string name;
  std::string hunks;   // after the "--- a/f" / "+++ b/f" lines
  bool gnu_malformed;  // GNU stops with "malformed patch at line N"
  std::string line;    // for a malformed one: the line our error names ("p.patch:N")
  bool final_newline = true;
};

std::vector<HunkCase> hunk_cases() {
  const std::string& N = no_newline;
  return {
      {"ContextOnly", "@@ -2,2 +2,2 @@\n l2\n l3\n", true, ":3:"},
      {"ContextOnlyFollowedByChanges", "@@ -2,2 +2,2 @@\n l2\n l3\n-l4\n+L4\n l5\n l6\n", true, ":3:"},
      {"EmptyHunk", "@@ -1,0 +1,0 @@\n", true, ":3:"},
      {"OldSideOverfull", "@@ -2,2 +2,2 @@\n-l2\n-l3\n-l4\n+L2\n+L3\n+L4\n", true, ":6:"},
      {"ContextAfterTheOldSideIsFull", "@@ -2,2 +2,3 @@\n l2\n-l3\n+L3\n l4\n", true, ":7:"},
      {"TruncatedByAnotherHunk", "@@ -2,2 +2,3 @@\n l2\n-l3\n+L3\n@@ -6 +6 @@\n-l6\n+L6\n", true, ":7:"},
      {"TruncatedAtTheEnd", "@@ -2,2 +2,3 @@\n l2\n-l3\n+L3\n", true, ":3:"},
      {"MarkerBeforeTheOldSideEnds", "@@ -6,3 +6,3 @@\n l6\n-l7\n" + N + "+L7\n l8\n" + N, true,
       ":6:", false},
      {"MarkerBeforeTheNewSideEnds", "@@ -6,3 +6,3 @@\n l6\n-l7\n+L7\n" + N + " l8\n" + N, true,
       ":7:", false},
      {"MarkerAfterLeadingContext", "@@ -6,3 +6,3 @@\n l6\n" + N + "-l7\n+L7\n l8\n" + N, true, ":5:", false},
      {"TwoMarkersInARow", "@@ -7,2 +7,2 @@\n l7\n-l8\n" + N + N + "+L8\n", true, ":7:", false},
      {"MarkerFirstInTheHunk", "@@ -7,2 +7,2 @@\n" + N + " l7\n-l8\n+L8\n", true, ":4:", false},
      // What GNU applies: counts that end the hunk early leave the rest as text between diffs.
      {"TrailingContextBeyondTheCounts", "@@ -2,2 +2,2 @@\n l2\n-l3\n+L3\n l4\n l5\n l6\n", false, ""},
      {"TrailingRemovalBeyondTheCounts", "@@ -2,2 +2,2 @@\n l2\n-l3\n+L3\n-l4\n", false, ""},
      {"TrailingAdditionBeyondTheCounts", "@@ -2,2 +2,2 @@\n l2\n-l3\n+L3\n+X\n l4\n l5\n", false, ""},
      {"TrailingGarbage", "@@ -2,2 +2,2 @@\n l2\n-l3\n+L3\nzzz\n", false, ""},
      {"MarkersOnBothLastLines", "@@ -7,2 +7,2 @@\n l7\n-l8\n" + N + "+L8\n" + N, false, "", false},
      {"MarkerOnTheOldSideOnly", "@@ -7,2 +7,2 @@\n l7\n-l8\n" + N + "+L8\n", false, "", false},
      {"MarkerOnTheOldSideThenTwoAdded", "@@ -7,2 +7,3 @@\n l7\n-l8\n" + N + "+L8\n+X\n" + N, false, "",
       false},
      {"AddedSideFirst", "@@ -7,2 +7,2 @@\n l7\n+L8\n" + N + "-l8\n" + N, false, "", false},
      {"MarkerOnFinalContext", "@@ -6,3 +6,3 @@\n l6\n-l7\n+L7\n l8\n" + N, false, "", false},
      {"SecondMarkerAfterTheHunk", "@@ -7,2 +7,2 @@\n l7\n-l8\n+L8\n" + N + N, false, ""},
  };
}

class MalformedHunks : public ::testing::TestWithParam<HunkCase> {};

TEST_P(MalformedHunks, RefusedWhereGnuRefusesAndIdenticalWhereItApplies) {
  const HunkCase& c = GetParam();
  test::TempDir tmp;
  std::string content = eight_lines;
  if (!c.final_newline) content.pop_back();
  const SideBySide both =
      expect_same_as_gnu(tmp, "p", FileTree{{"f", {content}}}, "--- a/f\n+++ b/f\n" + c.hunks);
  if (c.gnu_malformed) {
    EXPECT_NE(both.gnu.said.find("malformed patch"), std::string::npos) << both.gnu.said;
    EXPECT_EQ(both.gnu.files.at("f"), content) << "GNU wrote nothing";
    EXPECT_NE(both.our_error.find("p.patch" + c.line), std::string::npos) << both.our_error;
  } else {
    EXPECT_EQ(both.gnu.exit_code, 0) << both.gnu.said;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedHunks, ::testing::ValuesIn(hunk_cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace apexnpu::patch
