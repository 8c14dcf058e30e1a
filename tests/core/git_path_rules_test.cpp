#include "core/git_path_rules.h"

#include <gtest/gtest.h>

#include "core/relative_path.h"

namespace apexnpu {
namespace {

// Every spelling under which some file system git protects reads a name as ".git".
TEST(GitPathRules, EverySpellingOfDotGitIsRefused) {
  for (const std::string name :
       {".git", ".GIT", ".Git", ".gIt", "git~1", "GIT~1", ".git.", ".git ", ".git. .",
        ".git::$INDEX_ALLOCATION", "a\\.git", ".git\\x", ".g\u200cit", ".\u200dgit", ".gi\u200et",
        ".git\u200f", "\u202a.git", "\u206f.GIT", "\ufeff.git"}) {
    SCOPED_TRACE(name);
    const auto reason = git_component_reason(name);
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find(".git"), std::string::npos) << *reason;
    EXPECT_TRUE(unsafe_path_reason("apex/" + name + "/config").has_value());
  }
}

// Names that only look alike are ordinary names.
TEST(GitPathRules, LookalikesAreAccepted) {
  for (const std::string name :
       {".github", ".gitignore", ".gitattributes", ".gitmodules", "git", "git~2", "git~10", ".gita", "x.git",
        ".g\u200bit", "\u00e9.git", ".git~1", "git~1x"}) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(git_component_reason(name).has_value());
    EXPECT_FALSE(unsafe_path_reason("apex/" + name).has_value());
  }
  EXPECT_FALSE(git_component_reason("caf\xc3\xa9.py").has_value());
  EXPECT_FALSE(git_component_reason(".g\xffit").has_value()) << "not UTF-8: another name";
  EXPECT_FALSE(control_character_reason("docs/with space/caf\xc3\xa9.py").has_value());
}

TEST(GitPathRules, ControlCharactersAreRefusedAndShownEscaped) {
  for (const std::string& name : {std::string("a\nb.py"), std::string("tab\there"), std::string("cr\r"),
                                  std::string("del\x7f"), std::string("esc\x1b[0m")}) {
    SCOPED_TRACE(name);
    const auto reason = control_character_reason("apex/" + name);
    ASSERT_TRUE(reason.has_value());
    EXPECT_NE(reason->find("control character"), std::string::npos) << *reason;
    EXPECT_EQ(reason->find('\n'), std::string::npos) << "the reason prints the name escaped";
    EXPECT_EQ(reason->find("apex"), std::string::npos) << "it names the component: " << *reason;
    EXPECT_FALSE(git_component_reason(name).has_value()) << "the patch parser decodes them as GNU does";
  }
}

TEST(GitPathRules, DotGitmodulesIsRefusedAsASymlinkOnly) {
  for (const std::string name : {".gitmodules", ".GITMODULES", ".gitmodules .", "gitmod~1", "GITMOD~4",
                                 "gi7eba~1", ".g\u200citmodules", ".gitmodules::$DATA"}) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(git_symlink_reason(name).has_value());
    EXPECT_FALSE(git_component_reason(name).has_value()) << "a regular file of that name is fine";
  }
  for (const std::string name : {".gitmodule", "gitmod~5", ".gitmodulesx", "modules", "gitmod~1x"})
    EXPECT_FALSE(git_symlink_reason(name).has_value()) << name;
}

}  // namespace
}  // namespace apexnpu
