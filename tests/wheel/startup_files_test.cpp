// apex's start-up hook files: taken from the tree's root when it holds them, as regular files.
#include "wheel/startup_files.h"

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace apexnpu::wheel {
namespace {

TEST(StartupFiles, FromATreeInMemoryTakesBothAndNothingElse) {
  const FileTree tree = {{"apex/__init__.py", {"", FileKind::regular}},
                         {"apex-aiak-startup.pth", {"import os\n", FileKind::regular}},
                         {"_apex_aiak_startup.py", {"x = 1\n", FileKind::regular}},
                         {"setup.py", {"", FileKind::regular}},
                         {"other.pth", {"import x\n", FileKind::regular}}};
  WheelFiles files = {{"apex/__init__.py", ""}};
  add_startup_files(tree, files);
  EXPECT_EQ(files, (WheelFiles{{"apex/__init__.py", ""},
                               {"apex-aiak-startup.pth", "import os\n"},
                               {"_apex_aiak_startup.py", "x = 1\n"}}));
  EXPECT_TRUE(has_startup_module(files));
}

TEST(StartupFiles, ATreeWithoutThemOrWithLinksGivesNone) {
  const FileTree tree = {{"apex/__init__.py", {"", FileKind::regular}},
                         {"_apex_aiak_startup.py", {"elsewhere.py", FileKind::symlink}}};
  WheelFiles files;
  add_startup_files(tree, files);
  EXPECT_TRUE(files.empty());
  EXPECT_FALSE(has_startup_module(files));
}

TEST(StartupFiles, FromADirectory) {
  test::TempDir dir;
  test::write_file(dir / "apex-aiak-startup.pth", "import os\n");
  test::write_file(dir / "elsewhere.py", "x = 1\n");
  std::filesystem::create_symlink("elsewhere.py", dir / "_apex_aiak_startup.py");
  WheelFiles files;
  add_startup_files(dir.path(), files);
  EXPECT_EQ(files, (WheelFiles{{"apex-aiak-startup.pth", "import os\n"}}));
  std::filesystem::remove(dir / "_apex_aiak_startup.py");
  test::write_file(dir / "_apex_aiak_startup.py", "x = 2\n");
  add_startup_files(dir.path(), files);
  EXPECT_EQ(files.at("_apex_aiak_startup.py"), "x = 2\n");
}

}  // namespace
}  // namespace apexnpu::wheel
