// Empty files: GNU patch 2.7.6 and git apply both create one from a header-only git diff, but
// GNU patch cannot delete one that way, so the writer refuses that case.
#include <gtest/gtest.h>

#include "core/error.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {
namespace {

TEST(EmptyFiles, CreationIsAHeaderOnlyGitDiffThatParsesAndApplies) {
  FileTree before;
  FileTree after;
  after["dir/empty"] = FileEntry{"", FileKind::regular};
  const std::string text = write_patch(before, after, {"dir/empty"});
  EXPECT_EQ(text, "diff --git a/dir/empty b/dir/empty\nnew file mode 100644\n");
  const PatchSet set = parse_patch(text, "e.patch");
  ASSERT_EQ(set.files.size(), 1u);
  EXPECT_EQ(set.files[0].operation, FileOperation::create);
  const ApplyResult result = apply_patch(set, before);
  ASSERT_TRUE(result.ok) << result.rejects;
  EXPECT_EQ(result.tree, after);
}

TEST(EmptyFiles, DeletingAnEmptyFileIsAClearWriterError) {
  FileTree before;
  before["gone"] = FileEntry{"", FileKind::regular};
  try {
    write_patch(before, FileTree{}, {"gone"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gone"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace apexnpu::patch
