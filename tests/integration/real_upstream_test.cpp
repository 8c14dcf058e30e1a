// gen and make-patch on the real NVIDIA Apex repository (APEXNPU_TEST_UPSTREAM: a path or URL).
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/data_dir.h"
#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

// The commit patches/UPSTREAM pins, which gen and make-patch default to.
std::string pinned_commit() {
  const stdfs::path file = stdfs::path(APEXNPU_SOURCE_DIR) / "patches" / "UPSTREAM";
  return parse_upstream_pin(read_file(file), file.string()).commit;
}

class RealUpstreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* up = std::getenv("APEXNPU_TEST_UPSTREAM");
    if (up == nullptr || *up == '\0')
      GTEST_SKIP() << "APEXNPU_TEST_UPSTREAM is not set: set it to an NVIDIA Apex repository "
                      "(path or URL) to run the tests against real upstream";
    upstream = up;
    // The files at the pinned commit, for GNU patch to work on.
    const std::string cmd = "git --git-dir='" + upstream + "' archive " + pinned_commit() + " | tar -x -C '" +
                            (tmp / "pristine").string() + "'";
    stdfs::create_directories(tmp / "pristine");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  void edit(const stdfs::path& root) {
    std::string init = read_file(root / "apex/__init__.py");
    write_file(root / "apex/__init__.py", init + "# NPU edition\n");
    std::string frontend = read_file(root / "apex/amp/frontend.py");
    const auto at = frontend.find("import torch");
    ASSERT_NE(at, std::string::npos);
    frontend.insert(at, "import os  # npu\n");
    write_file(root / "apex/amp/frontend.py", frontend);
    stdfs::remove(root / "apex/RNN/README.md");
    write_file(root / "apex/npu/__init__.py", "DEVICE = 'npu'\n");
  }

  TempDir tmp;
  std::string upstream;
};

TEST_F(RealUpstreamTest, GenMatchesGnuPatchAtThePinnedCommit) {
  copy_work_tree(tmp / "pristine", tmp / "diff/a");
  copy_work_tree(tmp / "pristine", tmp / "diff/b");
  edit(tmp / "diff/b");
  write_file(tmp / "real.patch", gnu_diff(tmp / "diff", "a", "b"));

  const RunResult r = run_apexnpu({"gen", "--upstream", upstream, "--patch", (tmp / "real.patch").string(),
                                   "--no-overlay", "-o", (tmp / "out").string(), "--json"},
                                  tmp / "home");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["upstream"]["commit"], pinned_commit());

  copy_work_tree(tmp / "pristine", tmp / "gnu");
  ASSERT_EQ(gnu_patch(tmp / "gnu", tmp / "real.patch"), 0);
  EXPECT_EQ(tree_snapshot(tmp / "out"), tree_snapshot(tmp / "gnu"));
}

TEST_F(RealUpstreamTest, MakePatchOfAnEditedTreeRoundTrips) {
  copy_work_tree(tmp / "pristine", tmp / "edited");
  edit(tmp / "edited");
  const RunResult made = run_apexnpu({"make-patch", "--upstream", upstream, "--tree",
                                      (tmp / "edited").string(), "-o", (tmp / "patches").string()},
                                     tmp / "home");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const RunResult gen =
      run_apexnpu({"gen", "--upstream", upstream, "--patch", (tmp / "patches/npu.patch").string(),
                   "--overlay", (tmp / "patches/overlay").string(), "-o", (tmp / "regen").string()},
                  tmp / "home");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(tree_snapshot(tmp / "regen"), tree_snapshot(tmp / "edited"));
}

TEST_F(RealUpstreamTest, TheBundledPatchAndOverlayApply) {
  const RunResult r =
      run_apexnpu({"gen", "--upstream", upstream, "-o", (tmp / "out").string()}, tmp / "home");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(stdfs::exists(tmp / "out/apex/__init__.py"));
  EXPECT_TRUE(stdfs::exists(tmp / "out/apex/npu/__init__.py"));
}

}  // namespace
}  // namespace apexnpu::test
