// The file-system edge: reading trees without following links, excludes, and atomic writes that
// never leave a half-made target.
#include "fs/tree_io.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/error.h"
#include "fs/file_io.h"
#include "support/test_support.h"

namespace apexnpu::fs {
namespace {

using test::TempDir;
namespace stdfs = std::filesystem;

TEST(ReadTree, RecordsSymlinksAndModesAndHonoursExcludes) {
  TempDir tmp;
  test::write_file(tmp / "t/a.py", "a\n");
  test::write_file(tmp / "t/bin/run", "#!/bin/sh\n", true);
  test::write_file(tmp / "t/pkg/__pycache__/a.pyc", "junk");
  test::write_file(tmp / "t/build/x", "junk");
  test::write_file(tmp / "t/lib.so", "junk");
  test::write_file(tmp / "t/keep.log", "log");
  stdfs::create_directories(tmp / "outside");
  test::write_file(tmp / "outside/secret", "s");
  stdfs::create_directory_symlink(tmp / "outside", tmp / "t/escape");

  FileTree tree = read_tree(tmp / "t", default_excludes());
  EXPECT_EQ(tree.size(), 4u);
  EXPECT_EQ(tree.at("bin/run").kind, FileKind::executable);
  EXPECT_EQ(tree.at("escape").kind, FileKind::symlink);
  EXPECT_FALSE(tree.contains("escape/secret")) << "symlinks are never followed";
  EXPECT_TRUE(tree.contains("keep.log"));

  std::vector<std::string> more = default_excludes();
  more.push_back("*.log");
  EXPECT_FALSE(read_tree(tmp / "t", more).contains("keep.log"));
  EXPECT_TRUE(is_excluded("a/b/__pycache__/c.pyc", default_excludes()));
  EXPECT_TRUE(is_excluded("docs/x", {"docs/"}));
  EXPECT_FALSE(is_excluded("apex/builder.py", default_excludes()));
}

TEST(WriteTree, RoundTripsContentAndModes) {
  TempDir tmp;
  const FileTree tree{{"a/b.py", {"x\r\n"}},
                      {"run.sh", {"#!/bin/sh\n", FileKind::executable}},
                      {"l", {"a/b.py", FileKind::symlink}}};
  write_tree_atomically(tree, tmp / "out", ReplaceMode::refuse_non_empty);
  EXPECT_EQ(read_tree(tmp / "out"), tree);
  struct stat st {};
  ASSERT_EQ(::stat((tmp / "out/run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST(WriteTree, RefusesANonEmptyTargetUnlessReplacing) {
  TempDir tmp;
  test::write_file(tmp / "out/old", "old\n");
  const FileTree tree{{"new", {"new\n"}}};
  EXPECT_THROW(write_tree_atomically(tree, tmp / "out", ReplaceMode::refuse_non_empty), Error);
  EXPECT_EQ(test::read_file(tmp / "out/old"), "old\n");
  write_tree_atomically(tree, tmp / "out", ReplaceMode::replace);
  EXPECT_EQ(read_tree(tmp / "out"), tree);
  for (const auto& e : stdfs::directory_iterator(tmp.path()))
    EXPECT_EQ(e.path().filename(), "out") << "no temporary directory left behind";
}

TEST(WriteTree, AFailureLeavesTheTargetAsItWas) {
  TempDir tmp;
  test::write_file(tmp / "out/old", "old\n");
  // A file and a directory of the same name, and a link that another path would go through.
  EXPECT_THROW(
      write_tree_atomically(FileTree{{"x", {"1"}}, {"x/y", {"2"}}}, tmp / "out", ReplaceMode::replace),
      Error);
  EXPECT_THROW(write_tree_atomically(FileTree{{"l", {"/tmp", FileKind::symlink}}, {"l/pwn", {"2"}}},
                                     tmp / "out", ReplaceMode::replace),
               Error);
  EXPECT_THROW(write_tree_atomically(FileTree{{"../up", {"1"}}}, tmp / "out", ReplaceMode::replace), Error);
  EXPECT_EQ(test::snapshot(tmp / "out"), (std::map<std::string, std::string>{{"old", "old\n"}}));
  EXPECT_FALSE(stdfs::exists(tmp / "up"));
  for (const auto& e : stdfs::directory_iterator(tmp.path())) EXPECT_EQ(e.path().filename(), "out");
}

TEST(StagedTree, AppearsOnlyOnCommitAndLeavesNothingWhenDropped) {
  TempDir tmp;
  test::write_file(tmp / "out/old", "old\n");
  const FileTree tree{{"dir/new", {"new\n"}}};
  { StagedTree dropped(tree, tmp / "out", ReplaceMode::replace); }
  EXPECT_EQ(test::snapshot(tmp.path()), (std::map<std::string, std::string>{{"out/old", "old\n"}}));

  StagedTree staged(tree, tmp / "out", ReplaceMode::replace);
  EXPECT_EQ(test::read_file(tmp / "out/old"), "old\n") << "written beside, not yet in place";
  staged.commit();
  EXPECT_EQ(read_tree(tmp / "out"), tree);
  EXPECT_THROW(staged.commit(), Error);
  for (const auto& e : stdfs::directory_iterator(tmp.path())) EXPECT_EQ(e.path().filename(), "out");
  EXPECT_THROW(StagedTree(tree, tmp / "out", ReplaceMode::refuse_non_empty), Error);
}

TEST(ReadTree, NamesWhatItCannotTake) {
  TempDir tmp;
  test::write_file(tmp / "t/a.py", "a\n");
  const std::string long_target = std::string(300, 'x') + "/target";
  stdfs::create_symlink(long_target, tmp / "t/long");
  EXPECT_EQ(read_tree(tmp / "t").at("long").content, long_target);

  // A root given as a symlink to a directory (a CI checkout, a volume) is followed (issue 44,
  // point 8); one to a file or to nothing is not a directory.
  stdfs::create_directory_symlink(tmp / "t", tmp / "root-link");
  EXPECT_EQ(read_tree(tmp / "root-link"), read_tree(tmp / "t"));
  stdfs::create_symlink(tmp / "t/a.py", tmp / "file-link");
  stdfs::create_symlink(tmp / "nowhere", tmp / "dangling");
  for (const char* link : {"file-link", "dangling"}) {
    try {
      read_tree(tmp / link);
      ADD_FAILURE() << link << " is not a directory";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(link) + " is not a directory"), std::string::npos)
          << e.what();
    }
  }
  ASSERT_EQ(::mkfifo((tmp / "t/sub/pipe").c_str(), 0644), -1) << "no parent yet";
  stdfs::create_directories(tmp / "t/sub");
  ASSERT_EQ(::mkfifo((tmp / "t/sub/pipe").c_str(), 0644), 0);
  try {
    read_tree(tmp / "t");
    ADD_FAILURE() << "a FIFO is refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("t/sub/pipe is not a regular file, directory or symlink"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(read_tree(tmp / "t", {"pipe"}).size(), 2u) << "unless excluded";
}

TEST(ReadTree, EntersOnlyTheTopLevelLinksItIsToldTo) {
  TempDir tmp;
  test::write_file(tmp / "elsewhere/x.py", "x\n");
  test::write_file(tmp / "t/a.py", "a\n");
  stdfs::create_directory_symlink(tmp / "elsewhere", tmp / "t/pkg");
  stdfs::create_directories(tmp / "t/sub");
  stdfs::create_directory_symlink(tmp / "elsewhere", tmp / "t/sub/pkg");  // not top-level
  stdfs::create_symlink(tmp / "t/a.py", tmp / "t/file");
  const FileTree plain = read_tree(tmp / "t");
  EXPECT_EQ(plain.at("pkg").kind, FileKind::symlink);
  const FileTree entered = read_tree(tmp / "t", {}, {}, {"pkg", "file"});
  EXPECT_EQ(entered.at("pkg/x.py").content, "x\n");
  EXPECT_FALSE(entered.contains("pkg"));
  EXPECT_EQ(entered.at("sub/pkg").kind, FileKind::symlink) << "only top-level links are entered";
  EXPECT_EQ(entered.at("file").kind, FileKind::symlink) << "a link to a file stays a link";
}

TEST(WriteFile, ReplacesAtomicallyAndReadRefusesSymlinks) {
  TempDir tmp;
  write_file_atomic(tmp / "f", "one");
  write_file_atomic(tmp / "f", "two");
  EXPECT_EQ(read_file(tmp / "f"), "two");
  stdfs::create_symlink(tmp / "f", tmp / "link");
  EXPECT_THROW(read_file(tmp / "link"), Error);
  EXPECT_THROW(write_file_atomic(tmp / "missing-dir/f", "x"), Error);
}

}  // namespace
}  // namespace apexnpu::fs
