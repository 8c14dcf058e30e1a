// Every npu.patch Ascend has published (each branch of APEXNPU_TEST_ASCEND, a git directory of
// Ascend's apex), applied by gen to NVIDIA Apex at the pinned commit (APEXNPU_TEST_UPSTREAM) and
// by GNU patch -p1 to the same files: where GNU applies one, gen gives the same bytes; where GNU
// refuses one, so does gen, writing nothing. Skipped unless both variables are set.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "core/data_dir.h"
#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

std::string git(const std::string& git_dir, const std::vector<std::string>& args) {
  std::vector<std::string> all{"--git-dir=" + git_dir};
  all.insert(all.end(), args.begin(), args.end());
  const RunResult r = run_process("git", all);
  if (r.exit_code != 0) throw std::runtime_error("git " + args.front() + " failed: " + r.err);
  return r.out;
}

TEST(AscendBranches, GenAppliesEveryPublishedPatchAsGnuPatchDoes) {
  const std::string upstream = env("APEXNPU_TEST_UPSTREAM"), ascend = env("APEXNPU_TEST_ASCEND");
  if (upstream.empty() || ascend.empty())
    GTEST_SKIP() << "set APEXNPU_TEST_UPSTREAM (NVIDIA Apex) and APEXNPU_TEST_ASCEND (a git "
                    "directory of Ascend's apex) to apply every Ascend npu.patch";
  const stdfs::path pin_file = stdfs::path(APEXNPU_SOURCE_DIR) / "patches" / "UPSTREAM";
  const std::string pin = parse_upstream_pin(read_file(pin_file), pin_file.string()).commit;
  TempDir tmp;
  stdfs::create_directories(tmp / "pristine");
  const std::string unpack = "git --git-dir='" + upstream + "' archive " + pin + " | tar -x -C '" +
                             (tmp / "pristine").string() + "'";
  ASSERT_EQ(std::system(unpack.c_str()), 0) << unpack;

  std::istringstream branches(git(ascend, {"for-each-ref", "--format=%(refname:short)", "refs/heads"}));
  int applied = 0, refused = 0;
  for (std::string branch; std::getline(branches, branch);) {
    SCOPED_TRACE("Ascend branch " + branch);
    const RunResult show = run_process("git", {"--git-dir=" + ascend, "show", branch + ":patch/npu.patch"});
    if (show.exit_code != 0) continue;  // a branch without a patch
    const stdfs::path dir = tmp / "branches" / std::to_string(applied + refused);
    write_file(dir / "npu.patch", show.out);

    copy_work_tree(tmp / "pristine", dir / "gnu");
    const int gnu = gnu_patch(dir / "gnu", dir / "npu.patch");
    const RunResult ours =
        run_apexnpu({"gen", "--upstream", upstream, "--ref", pin, "--patch", (dir / "npu.patch").string(),
                     "--no-overlay", "-o", (dir / "ours").string()},
                    tmp / "home");
    if (gnu == 0) {
      ++applied;
      ASSERT_EQ(ours.exit_code, 0) << "GNU patch applies it: " << ours.err;
      EXPECT_EQ(tree_snapshot(dir / "ours"), tree_snapshot(dir / "gnu"));
    } else {
      ++refused;
      EXPECT_EQ(ours.exit_code, 1) << "GNU patch refuses it (exit " << gnu << "): " << ours.out;
      EXPECT_FALSE(stdfs::exists(dir / "ours")) << "nothing written";
    }
  }
  EXPECT_GE(applied, 13) << "Ascend has published at least thirteen patches GNU applies";
  RecordProperty("applied", applied);
  RecordProperty("refused", refused);
}

}  // namespace
}  // namespace apexnpu::test
