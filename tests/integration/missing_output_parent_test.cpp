// gen -o a/b where a/ does not exist (issue 44, point 10): the parent is made, as git clone and
// pip install --target make theirs. When the patch does not apply, the message is the failed
// hunks (with the reject report beside -o), never "cannot write a/b.rej"; a run that writes
// nothing removes the parents it made.
#include <gtest/gtest.h>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class MissingOutputParent : public ::testing::Test {
 protected:
  MissingOutputParent() : upstream(tmp.path()) {
    write_file(tmp / "empty.patch", "");
    stdfs::create_directories(tmp / "overlay");
  }

  RunResult gen(const stdfs::path& patch, const stdfs::path& out) {
    return run_apexnpu(gen_args(upstream, upstream.first, patch, tmp / "overlay", out), tmp / "home");
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
};

TEST_F(MissingOutputParent, GenMakesTheParentOfItsOutput) {
  const RunResult r = gen(tmp / "empty.patch", tmp / "a" / "b" / "apex");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(tmp / "a/b/apex/README"), read_file(upstream.at_first / "README"));
}

TEST_F(MissingOutputParent, AFailedPatchSaysWhichHunksFailed) {
  write_file(tmp / "conflict.patch",
             "--- a/apex/__init__.py\n+++ b/apex/__init__.py\n@@ -3,3 +3,3 @@\n"
             " not in upstream 1\n-not in upstream 2\n+npu line\n not in upstream 3\n");
  const RunResult r = gen(tmp / "conflict.patch", tmp / "a" / "b");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("did not apply"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("apex/__init__.py: hunk @@ -3,3 +3,3 @@"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("No such file or directory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rejects written to " + (tmp / "a" / "b.rej").string()), std::string::npos) << r.err;
  EXPECT_NE(read_file(tmp / "a" / "b.rej").find("+npu line"), std::string::npos);
  EXPECT_FALSE(stdfs::exists(tmp / "a" / "b"));
}

TEST_F(MissingOutputParent, AFailureThatWritesNothingRemovesTheParentsItMade) {
  // An overlay file that upstream has too: refused before anything is written.
  write_file(tmp / "overlay" / "README", "mine\n");
  const RunResult r = gen(tmp / "empty.patch", tmp / "x" / "y" / "z");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("also exists in the patched upstream tree"), std::string::npos) << r.err;
  EXPECT_FALSE(stdfs::exists(tmp / "x"));
}

}  // namespace
}  // namespace apexnpu::test
