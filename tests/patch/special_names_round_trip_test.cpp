// Trees whose file names hold every class of special character (spaces, quotes, backslashes,
// tabs, newlines, other control bytes, UTF-8, a leading quote or dash) round trip: the writer's
// patch applies through our applier, GNU patch -p1 and git apply to exactly the new tree.
#include <gtest/gtest.h>

#include "gnu_patch_run.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

const std::vector<std::string> special_names = {"with space.py",
                                                "dir with space/f",
                                                "q\"uote",
                                                "\"leading quote",
                                                "back\\slash",
                                                "tab\there",
                                                "new\nline",
                                                "ctrl\x01\x1f\x7f",
                                                "na\xc3\xafve/\xe4\xb8\xad\xe6\x96\x87.txt",
                                                "trailing space ",
                                                "-dash",
                                                "a/b c/d\te\nf\\g\"h"};

TEST(SpecialNames, EveryClassRoundTripsThroughOursGnuPatchAndGitApply) {
  FileTree before, after;
  std::vector<std::string> paths;
  int k = 0;
  for (const std::string& name : special_names) {
    // Each name edited, created, deleted or made executable, by turns.
    const std::string path = name, content = "line 1\nline 2\nline 3\n";
    paths.push_back(path);
    switch (k++ % 4) {
      case 0:
        before[path] = {content};
        after[path] = {"line 1\nline two\nline 3\n"};
        break;
      case 1:
        after[path] = {content};
        break;
      case 2:
        before[path] = {content};
        break;
      default:
        before[path] = {content};
        after[path] = {content, FileKind::executable};
    }
  }
  after["empty new"] = {""};
  paths.push_back("empty new");
  const std::string text = write_patch(before, after, paths);
  SCOPED_TRACE(text);

  const ApplyResult ours = apply_patch(parse_patch(text, "names.patch"), before);
  ASSERT_TRUE(ours.ok) << ours.rejects;
  EXPECT_EQ(ours.tree, after);

  test::TempDir tmp;
  const GnuOutcome gnu = run_gnu_patch(tmp, "gnu", before, text);
  ASSERT_EQ(gnu.exit_code, 0) << gnu.said;
  EXPECT_EQ(gnu.files, snapshot_of(after)) << "GNU patch";

  const test::stdfs::path git_dir = tmp / "git";
  for (const auto& [path, entry] : before) test::write_file(git_dir / path, entry.content);
  test::stdfs::create_directories(git_dir);
  test::write_file(tmp / "names.patch", text);
  ASSERT_EQ(test::run_process("git", {"init", "-q"}, {}, git_dir).exit_code, 0);
  const test::RunResult git =
      test::run_process("git", {"apply", (tmp / "names.patch").string()}, {}, git_dir);
  ASSERT_EQ(git.exit_code, 0) << git.err;
  test::stdfs::remove_all(git_dir / ".git");
  EXPECT_EQ(test::snapshot(git_dir), snapshot_of(after)) << "git apply";
}

}  // namespace
}  // namespace apexnpu::patch
