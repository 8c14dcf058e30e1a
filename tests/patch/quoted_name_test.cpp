// C-quoted names: decoding as git and GNU patch 2.7 do, quoting as the writer does, and reading
// names from "---"/"+++" and "diff --git" lines with GNU's rules for tabs and spaces.
#include "patch/quoted_name.h"

#include <gtest/gtest.h>

#include "patch/header_names.h"

namespace apexnpu::patch {
namespace {

using namespace std::string_literals;

std::optional<std::string> decoded(std::string_view text) {
  const auto d = decode_quoted_name(text);
  if (!d) return std::nullopt;
  return d->name;
}

TEST(QuotedName, DecodesEveryEscapeGitWrites) {
  EXPECT_EQ(decoded(R"("a/na\303\257ve name.txt")"), "a/na\xc3\xafve name.txt");
  EXPECT_EQ(decoded(R"("x\ty\n\"z\\w")"), "x\ty\n\"z\\w");
  EXPECT_EQ(decoded(R"("\a\b\f\v\r")"), "\a\b\f\v\r");
  EXPECT_EQ(decoded(R"("\001\177\377")"), "\x01\x7f\xff");
  EXPECT_EQ(decoded(R"("b/..\057outside/evil.txt")"), "b/../outside/evil.txt");
  EXPECT_EQ(decoded(R"("\000")"), "\0"s);
  EXPECT_EQ(decode_quoted_name(R"("ab"junk)")->length, 4u) << "what follows the quote is left";
}

TEST(QuotedName, RefusesWhatGitAndGnuPatchRefuse) {
  for (const char* bad : {R"("x\qy")", R"("unterminated)", R"("a\400")", R"("a\12")", R"("a\0")", R"("a\8")",
                          R"("trailing\)", R"(")", R"(noquote)"})
    EXPECT_FALSE(decoded(bad)) << bad;
}

TEST(QuotedName, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(header_name("a/", "apex/amp/frontend.py"), "a/apex/amp/frontend.py");
  EXPECT_EQ(header_name("a/", "a b"), R"("a/a b")");
  EXPECT_EQ(header_name("b/", "t\tab"), R"("b/t\tab")");
  EXPECT_EQ(header_name("b/", "new\nline"), R"("b/new\nline")");
  EXPECT_EQ(header_name("b/", "q\"uote\\s"), R"("b/q\"uote\\s")");
  EXPECT_EQ(header_name("b/", "na\xc3\xafve"), R"("b/na\303\257ve")");
  EXPECT_EQ(header_name("b/", "\x01\x7f"), R"("b/\001\177")");
}

TEST(QuotedName, EveryByteRoundTrips) {
  for (int byte = 1; byte < 256; ++byte) {
    std::string name = "d/xy";
    name.insert(name.begin() + 3, static_cast<char>(byte));
    const std::string written = header_name("b/", name);
    const auto read = read_header_name(written + "\t1970-01-01 00:00:00");
    ASSERT_TRUE(read) << byte;
    EXPECT_EQ(read->name, "b/" + name) << byte;
    EXPECT_TRUE(read->epoch) << byte;
  }
}

TEST(HeaderNames, UnquotedNamesEndAtATabElseAtWhiteSpace) {
  EXPECT_EQ(read_header_name("b/a b c\t2020-01-01")->name, "b/a b c");
  EXPECT_EQ(read_header_name("b/a b\t")->name, "b/a b");
  EXPECT_EQ(read_header_name("b/a b")->name, "b/a");
  EXPECT_EQ(read_header_name("b/a\vb")->name, "b/a");
  EXPECT_EQ(read_header_name("  b/ab  ")->name, "b/ab");
  EXPECT_EQ(read_header_name("\"b/a b\" junk")->name, "b/a b");
  EXPECT_TRUE(read_header_name("/dev/null")->absent);
  EXPECT_TRUE(read_header_name("\"a/x y\"\t1970-01-01 00:00:00.000000000 +0000")->epoch);
  EXPECT_FALSE(read_header_name("\"b/x\\qy\""));
}

TEST(HeaderNames, GitLinesNameTwoFilesQuotedOrWithoutSpaces) {
  using Names = std::pair<std::string, std::string>;
  EXPECT_EQ(read_git_names("a/x b/x"), (Names{"a/x", "b/x"}));
  EXPECT_EQ(read_git_names(R"("a/a\tb" "b/a\tb")"), (Names{"a/a\tb", "b/a\tb"}));
  EXPECT_EQ(read_git_names(R"("a/a b" b/c)"), (Names{"a/a b", "b/c"}));
  EXPECT_FALSE(read_git_names("a/a b b/a b")) << "GNU patch cannot read this either";
  EXPECT_FALSE(read_git_names("a/x"));
  EXPECT_FALSE(read_git_names(R"("a/x\q" "b/x")"));
}

}  // namespace
}  // namespace apexnpu::patch
