// C-quoted and unquoted names with special characters, side by side with GNU patch: the same
// files where GNU applies; where GNU cannot read a name (a malformed quote) or finds it unsafe
// once decoded, we refuse the patch naming its line.
#include <gtest/gtest.h>

#include "core/error.h"
#include "gnu_patch_run.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

struct NameCase {
  std::string name;
  std::string patch;
  std::string our_error;  // empty: GNU applies it; else what our parse error says
};

std::string creating(const std::string& new_name) {
  return "--- /dev/null\n+++ " + new_name + "\n@@ -0,0 +1 @@\n+x\n";
}

std::vector<NameCase> name_cases() {
  return {
      {"Utf8Octal", creating(R"("b/na\303\257ve name.txt")"), ""},
      {"TabNewlineQuoteBackslash", creating(R"("b/x\ty\n\"z\\w")"), ""},
      {"ControlEscapes", creating(R"("b/a\a\b\f\v\r")"), ""},
      {"QuotedWithTimestamp", creating("\"b/a b\"\t2020-01-01 00:00:00.000000000 +0000"), ""},
      {"JunkAfterTheQuote", creating(R"("b/a"junk)"), ""},
      {"UnquotedSpaceEndsTheName", creating("b/a b"), ""},
      {"UnquotedSpaceBeforeATab", creating("b/a b c\t2020-01-01 00:00:00.000000000 +0000"), ""},
      {"GitMarkerTab", creating("b/a b\t"), ""},
      {"LeadingBlanks", creating("  b/ab"), ""},
      {"UnquotedQuoteAndBackslash", creating("b/a\"b\\tc"), ""},
      {"GitQuotedHeaderOnly", "diff --git \"a/a\\tb\" \"b/a\\tb\"\nnew file mode 100644\n", ""},
      {"ModifyQuoted", "--- \"a/sp ace\"\n+++ \"b/sp ace\"\n@@ -1 +1 @@\n-x\n+y\n", ""},
      {"GitDiffOfASpacedName",
       "diff --git a/sp ace b/sp ace\n--- a/sp ace\t\n+++ b/sp ace\t\n@@ -1 +1 @@\n-x\n+y\n", ""},
      {"UnknownEscape", creating(R"("b/x\qy")"), "q.patch:2: a malformed quoted file name"},
      {"Unterminated", creating(R"("b/xy)"), "q.patch:2: a malformed quoted file name"},
      {"OctalAbove377", creating(R"("b/a\400")"), "q.patch:2: a malformed quoted file name"},
      {"TwoDigitOctal", creating(R"("b/a\12")"), "q.patch:2: a malformed quoted file name"},
      {"EscapedDotDot", creating(R"("b/..\057outside/evil.txt")"),
       "q.patch:2: unsafe file name '../outside/evil.txt'"},
      {"GitHeaderOnlyWithUnquotedSpaces", "diff --git a/a b b/a b\nnew file mode 100644\n",
       "q.patch:1: cannot read the file names"},
  };
}

class QuotedNames : public ::testing::TestWithParam<NameCase> {};

TEST_P(QuotedNames, DecodedAsGnuPatchDecodesThem) {
  const NameCase& c = GetParam();
  test::TempDir tmp;
  const SideBySide both = expect_same_as_gnu(tmp, "q", FileTree{{"sp ace", {"x\n"}}}, c.patch);
  if (c.our_error.empty()) {
    EXPECT_EQ(both.gnu.exit_code, 0) << both.gnu.said;
  } else {
    EXPECT_NE(both.gnu.exit_code, 0) << both.gnu.said;
    EXPECT_EQ(both.gnu.files, snapshot_of(FileTree{{"sp ace", {"x\n"}}})) << "GNU wrote nothing";
    EXPECT_NE(both.our_error.find(c.our_error), std::string::npos) << both.our_error;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, QuotedNames, ::testing::ValuesIn(name_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(QuotedNames, ADecodedGitDirectoryIsRefused) {
  // GNU patch writes into .git/hooks; like every path rule here, the decoded name is refused.
  try {
    parse_patch(creating(R"("b/\056git/hooks/x")"), "q.patch");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q.patch:2: unsafe file name '.git/hooks/x'"), std::string::npos)
        << e.what();
  }
}

TEST(QuotedNames, ADecodedNulIsRefused) {
  // GNU patch would cut the name at the NUL and patch "a"; we refuse the name instead.
  try {
    parse_patch(creating(R"("b/a\000b")"), "q.patch");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("q.patch:2: a NUL byte in a file name"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace apexnpu::patch
