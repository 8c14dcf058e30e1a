// apexnpu make-patch: an edited tree -> npu.patch + overlay; gen of those reproduces the tree;
// the patch is deterministic and accepted by GNU patch and git apply.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class MakePatchTest : public ::testing::Test {
 protected:
  MakePatchTest() : upstream(tmp.path()) {
    copy_work_tree(upstream.at_first, edited);
    std::string frontend = read_file(edited / "apex/amp/frontend.py");
    frontend.replace(frontend.find("frontend line 3\n"), 16, "npu line 3\n");
    write_file(edited / "apex/amp/frontend.py", frontend);
    std::string crlf = read_file(edited / "csrc/windows.cpp");
    crlf.replace(crlf.find("crlf line 29\r\n"), 14, "");
    write_file(edited / "csrc/windows.cpp", crlf);
    write_file(edited / "README", numbered_lines("readme", 10) + "new last line, no newline");
    write_file(edited / "apex/__init__.py", read_file(edited / "apex/__init__.py"), true);
    stdfs::remove(edited / "apex/optimizers/__init__.py");
    write_file(edited / "apex/npu/__init__.py", "from .device import *\n");
    write_file(edited / "apex/npu/device.py", "no final newline");
    write_file(edited / "tools/npu_run.sh", "#!/bin/sh\necho npu\n", true);
    // Build leftovers and excluded files: never part of the patch or the overlay.
    write_file(edited / "apex/__pycache__/x.cpython-311.pyc", "junk");
    write_file(edited / "build/lib/apex/_C.so", "junk");
    write_file(edited / "apex.egg-info/PKG-INFO", "junk");
    write_file(edited / "debug.log", "junk");
  }

  RunResult make_patch(const stdfs::path& out) {
    return run_apexnpu({"make-patch", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
                        "--tree", edited.string(), "-o", out.string(), "--exclude", "*.log", "--json"},
                       tmp / "home");
  }

  // The edited tree without what make-patch leaves out.
  std::map<std::string, std::string> expected() {
    auto files = tree_snapshot(edited);
    std::erase_if(files, [](const auto& kv) {
      const std::string& p = kv.first;
      return p.starts_with("build/") || p.starts_with("apex.egg-info/") ||
             p.find("__pycache__") != std::string::npos || p == "debug.log";
    });
    return files;
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  stdfs::path edited = tmp / "edited";
};

TEST_F(MakePatchTest, GenOfTheRegeneratedPatchReproducesTheEditedTree) {
  const stdfs::path out = tmp / "patches";
  const RunResult made = make_patch(out);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto doc = nlohmann::json::parse(made.out);
  EXPECT_EQ(doc["deleted"], nlohmann::json::array({"apex/optimizers/__init__.py"}));
  EXPECT_EQ(doc["overlay_files"],
            nlohmann::json::array({"apex/npu/__init__.py", "apex/npu/device.py", "tools/npu_run.sh"}));

  const RunResult gen = run_apexnpu(
      {"gen", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first, "--patch",
       (out / "npu.patch").string(), "--overlay", (out / "overlay").string(), "-o", (tmp / "regen").string()},
      tmp / "home");
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  EXPECT_EQ(tree_snapshot(tmp / "regen"), expected());
}

TEST_F(MakePatchTest, TheSameTreeGivesByteIdenticalOutputs) {
  ASSERT_EQ(make_patch(tmp / "one").exit_code, 0);
  ASSERT_EQ(make_patch(tmp / "two").exit_code, 0);
  EXPECT_EQ(read_file(tmp / "one/npu.patch"), read_file(tmp / "two/npu.patch"));
  EXPECT_EQ(tree_snapshot(tmp / "one/overlay"), tree_snapshot(tmp / "two/overlay"));
  const std::string patch = read_file(tmp / "one/npu.patch");
  EXPECT_EQ(patch.find("1970-"), std::string::npos) << "no timestamps";
  EXPECT_LT(patch.find("apex/__init__.py"), patch.find("apex/amp/frontend.py")) << "sorted paths";
}

TEST_F(MakePatchTest, GnuPatchAndGitApplyAcceptThePatch) {
  const stdfs::path out = tmp / "patches";
  ASSERT_EQ(make_patch(out).exit_code, 0);
  auto with_overlay = [&](const stdfs::path& dir) {
    copy_work_tree(out / "overlay", dir);
    return tree_snapshot(dir);
  };

  const stdfs::path gnu = tmp / "gnu";
  copy_work_tree(upstream.at_first, gnu);
  ASSERT_EQ(gnu_patch(gnu, out / "npu.patch"), 0);
  EXPECT_EQ(with_overlay(gnu), expected());

  const stdfs::path git = tmp / "git-apply";
  copy_work_tree(upstream.at_first, git);
  const RunResult applied = run_process("git", {"apply", (out / "npu.patch").string()}, {}, git);
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_EQ(with_overlay(git), expected());
}

TEST_F(MakePatchTest, ReplacesAnOldOverlayWhole) {
  const stdfs::path out = tmp / "patches";
  write_file(out / "overlay/stale.py", "from an older patch\n");
  ASSERT_EQ(make_patch(out).exit_code, 0);
  EXPECT_FALSE(stdfs::exists(out / "overlay/stale.py"));
}

TEST_F(MakePatchTest, AMissingTreeIsAUsageError) {
  const RunResult r = run_apexnpu({"make-patch", "--upstream", upstream.repo.dir().string(), "--tree",
                                   (tmp / "nope").string(), "-o", (tmp / "patches").string()},
                                  tmp / "home");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  EXPECT_FALSE(stdfs::exists(tmp / "patches"));
}

}  // namespace
}  // namespace apexnpu::test
