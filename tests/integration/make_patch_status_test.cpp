// make-patch compares blob ids and diffs only the files that differ; its patch must be, byte for
// byte, the one diffing every file of the two trees gives (what it did before it skipped), and a
// make-patch that fails must leave no output behind.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fs/tree_io.h"
#include "git/upstream.h"
#include "integration/fixture.h"
#include "patch/patch_engine.h"

namespace apexnpu::test {
namespace {

class MakePatchStatusTest : public ::testing::Test {
 protected:
  MakePatchStatusTest() : upstream(tmp.path()) { copy_work_tree(upstream.at_first, edited); }

  RunResult make_patch(const stdfs::path& out) {
    return run_apexnpu({"make-patch", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
                        "--tree", edited.string(), "-o", out.string(), "--json"},
                       tmp / "home");
  }

  // What make-patch wrote before it compared blob ids: both trees read whole, and every
  // upstream path given to the writer, which leaves out the files that are equal.
  std::string patch_of_whole_trees() {
    git::UpstreamRequest request;
    request.upstream = upstream.repo.dir().string();
    request.ref = upstream.first;
    const FileTree before = git::read_upstream(request).tree;
    std::vector<std::string> paths;
    for (const auto& [path, entry] : before) paths.push_back(path);
    return patch::write_patch(before, fs::read_tree(edited, fs::default_excludes()), paths);
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  stdfs::path edited = tmp / "edited";
};

TEST_F(MakePatchStatusTest, SkipsEqualFilesAndWritesWhatDiffingEveryFileWrites) {
  std::string readme = read_file(edited / "README");
  readme.replace(readme.find("readme line 3"), 13, "README LINE 3");  // same size
  write_file(edited / "README", readme);
  std::string crlf = read_file(edited / "csrc/windows.cpp");
  crlf.replace(crlf.find("crlf line 5\r\n"), 13, "crlf line 5\n\r");  // same size, ending moved
  write_file(edited / "csrc/windows.cpp", crlf);
  write_file(edited / "apex/__init__.py", read_file(edited / "apex/__init__.py"), true);  // mode
  // Rewritten with the same bytes: a new inode and time, the same blob.
  write_file(edited / "apex/amp/frontend.py", read_file(edited / "apex/amp/frontend.py"));
  stdfs::remove(edited / "apex/optimizers/__init__.py");
  write_file(edited / "apex/npu/device.py", "DEVICE = 'npu'\n");

  const RunResult made = make_patch(tmp / "patches");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto doc = nlohmann::json::parse(made.out);
  EXPECT_EQ(doc["changed"], nlohmann::json::array({"README", "apex/__init__.py", "csrc/windows.cpp"}));
  EXPECT_EQ(doc["deleted"], nlohmann::json::array({"apex/optimizers/__init__.py"}));
  EXPECT_EQ(doc["overlay_files"], nlohmann::json::array({"apex/npu/device.py"}));
  EXPECT_EQ(doc["upstream"]["files"], 6);
  EXPECT_EQ(read_file(tmp / "patches/npu.patch"), patch_of_whole_trees());

  copy_work_tree(upstream.at_first, tmp / "gnu");
  ASSERT_EQ(gnu_patch(tmp / "gnu", tmp / "patches/npu.patch"), 0);
  copy_work_tree(tmp / "patches/overlay", tmp / "gnu");
  EXPECT_EQ(tree_snapshot(tmp / "gnu"), tree_snapshot(edited));
}

TEST_F(MakePatchStatusTest, AnUneditedTreeGivesAnEmptyPatch) {
  const RunResult made = make_patch(tmp / "patches");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(read_file(tmp / "patches/npu.patch"), "");
  EXPECT_TRUE(stdfs::is_empty(tmp / "patches/overlay"));
}

TEST_F(MakePatchStatusTest, AFailureLeavesNoOutput) {
  // A changed symlink cannot go into a patch: refused, after the overlay was already staged.
  write_file(edited / "apex/npu/device.py", "DEVICE = 'npu'\n");
  stdfs::remove(edited / "README");
  stdfs::create_symlink("apex/__init__.py", edited / "README");
  const RunResult made = make_patch(tmp / "out/patches");
  EXPECT_EQ(made.exit_code, 1);
  EXPECT_NE(made.err.find("README"), std::string::npos) << made.err;
  EXPECT_FALSE(stdfs::exists(tmp / "out")) << "nothing written, no directory made";

  // An existing output keeps its old patch and overlay.
  write_file(tmp / "kept/npu.patch", "old patch\n");
  write_file(tmp / "kept/overlay/old.py", "old\n");
  EXPECT_EQ(make_patch(tmp / "kept").exit_code, 1);
  EXPECT_EQ(tree_snapshot(tmp / "kept"),
            (std::map<std::string, std::string>{{"npu.patch", "old patch\n"}, {"overlay/old.py", "old\n"}}));
}

}  // namespace
}  // namespace apexnpu::test
