// -o on a mount point (issue 44, point 4): a container volume, here a real tmpfs. No rename
// reaches a mount point from its parent, which is another file system ("Invalid cross-device
// link"), and none replaces it ("Device or resource busy"), so gen, build and make-patch stage
// inside it and replace its entries together (fs/directory_update.h). A failed attempt leaves
// nothing behind, and what an older run left beside it that can never be finished is undone and
// removed. The tests run as root in CI; where mounting is not allowed they skip, saying so.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mount.h>

#include <cerrno>
#include <cstring>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

// The names of what apexnpu left inside `dir` (".<name>.apexnpu-*"), sorted.
std::vector<std::string> leftovers_inside(const stdfs::path& dir) {
  std::vector<std::string> names;
  const std::string prefix = "." + dir.filename().string() + ".apexnpu-";
  for (const auto& entry : stdfs::directory_iterator(dir))
    if (entry.path().filename().string().starts_with(prefix)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// A pid no process has, for a staging a dead run left.
int dead_pid() {
  for (int pid = 4000000; pid > 300000; pid -= 7919)
    if (::kill(pid, 0) != 0 && errno == ESRCH) return pid;
  return 0;
}

class MountPointOutput : public ::testing::Test {
 protected:
  MountPointOutput() : upstream(tmp.path()) {
    write_file(tmp / "empty.patch", "");
    write_file(tmp / "overlay" / "apex/npu/extra.py", "EXTRA = 1\n");
  }
  ~MountPointOutput() override {
    for (const stdfs::path& at : mounted) ::umount2(at.c_str(), MNT_DETACH);
  }

  // A tmpfs of `size` mounted on `at` (made first); false, with the reason in `why`, when this
  // process may not mount.
  bool mount_tmpfs(const stdfs::path& at, const std::string& size, std::string& why) {
    stdfs::create_directories(at);
    const std::string options = "size=" + size + ",mode=0755";
    if (::mount("tmpfs", at.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      why = std::strerror(errno);
      return false;
    }
    mounted.push_back(at);
    return true;
  }

  RunResult gen(const stdfs::path& out, const std::vector<std::string>& more = {}) {
    std::vector<std::string> args =
        gen_args(upstream, upstream.first, tmp / "empty.patch", tmp / "overlay", out);
    args.insert(args.end(), more.begin(), more.end());
    return run_apexnpu(args, tmp / "home");
  }
  RunResult make_patch(const stdfs::path& tree, const stdfs::path& out) {
    return run_apexnpu({"make-patch", "--upstream", upstream.repo.dir().string(), "--ref", upstream.first,
                        "--tree", tree.string(), "-o", out.string()},
                       tmp / "home");
  }
  RunResult build(const stdfs::path& tree, const stdfs::path& out) {
    return run_apexnpu({"build", "--python=/usr/bin/python3", "--tree", tree.string(), "-o", out.string(),
                        "--wheel", "--no-emulator", "--object-cache", cache.string(), "-j2"},
                       tmp / "home");
  }

  // Nothing of apexnpu's beside `dir` or inside it.
  void expect_no_leftovers(const stdfs::path& dir) {
    EXPECT_EQ(leftovers_beside(dir), std::vector<std::string>{});
    if (stdfs::is_directory(dir)) EXPECT_EQ(leftovers_inside(dir), std::vector<std::string>{});
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  std::vector<stdfs::path> mounted;
  stdfs::path cache = stdfs::path(APEXNPU_BUILD_DIR) / "test-object-cache";
};

#define MOUNT_OR_SKIP(at, size)                                                            \
  do {                                                                                     \
    std::string why;                                                                       \
    if (!mount_tmpfs(at, size, why)) GTEST_SKIP() << "cannot mount a tmpfs here: " << why; \
  } while (0)

TEST_F(MountPointOutput, GenWritesIntoAMountPointAndReplacesItsEntries) {
  const stdfs::path volume = tmp / "volume";
  MOUNT_OR_SKIP(volume, "64m");
  const RunResult r = gen(volume);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(volume / "apex/npu/extra.py"), "EXTRA = 1\n");
  expect_no_leftovers(volume);

  // Not empty now: refused without --force, replaced with it (what the new tree lacks goes).
  EXPECT_EQ(gen(volume).exit_code, 1);
  write_file(volume / "stray.txt", "left by hand\n");
  write_file(tmp / "overlay" / "apex/npu/extra.py", "EXTRA = 2\n");
  const RunResult forced = gen(volume, {"--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(read_file(volume / "apex/npu/extra.py"), "EXTRA = 2\n");
  EXPECT_FALSE(stdfs::exists(volume / "stray.txt"));
  expect_no_leftovers(volume);
  // The same tree gen writes anywhere else.
  ASSERT_EQ(gen(tmp / "plain").exit_code, 0);
  EXPECT_EQ(snapshot(volume), snapshot(tmp / "plain"));
}

TEST_F(MountPointOutput, MakePatchAndBuildWriteIntoAMountPoint) {
  ASSERT_EQ(gen(tmp / "tree").exit_code, 0);
  write_file(tmp / "tree" / "apex/__init__.py", read_file(tmp / "tree" / "apex/__init__.py") + "X = 1\n");
  const stdfs::path patches = tmp / "patches-volume";
  MOUNT_OR_SKIP(patches, "16m");
  for (int run = 0; run < 2; ++run) {  // into the empty volume, then over its own output
    const RunResult made = make_patch(tmp / "tree", patches);
    ASSERT_EQ(made.exit_code, 0) << made.err;
    EXPECT_NE(read_file(patches / "npu.patch").find("+X = 1"), std::string::npos);
    EXPECT_EQ(read_file(patches / "overlay" / "apex/npu/extra.py"), "EXTRA = 1\n");
    expect_no_leftovers(patches);
  }
  const stdfs::path dist = tmp / "dist-volume";
  MOUNT_OR_SKIP(dist, "256m");
  const RunResult built = build(tmp / "tree", dist);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  bool wheel = false;
  for (const auto& entry : stdfs::directory_iterator(dist)) wheel |= entry.path().extension() == ".whl";
  EXPECT_TRUE(wheel);
  expect_no_leftovers(dist);
}

// A volume too small for the tree: the attempt fails naming the output, and leaves nothing in
// the volume or beside it.
TEST_F(MountPointOutput, AFailedAttemptLeavesNothingBehind) {
  const stdfs::path volume = tmp / "small-volume";
  MOUNT_OR_SKIP(volume, "8k");
  const RunResult r = gen(volume);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(volume.string()), std::string::npos) << r.err;
  EXPECT_TRUE(stdfs::is_empty(volume));
  expect_no_leftovers(volume);
}

// What an older run left beside the volume (a committed update whose renames can never cross
// into the mount): the next run undoes and removes it instead of keeping it for ever, and
// writes its own output.
TEST_F(MountPointOutput, StaleStagingThatCannotBeReplayedIsRemoved) {
  ASSERT_EQ(gen(tmp / "tree").exit_code, 0);
  const stdfs::path patches = tmp / "patches-volume";
  MOUNT_OR_SKIP(patches, "16m");
  const int pid = dead_pid();
  ASSERT_NE(pid, 0);
  const stdfs::path stale = tmp / (".patches-volume.apexnpu-staging-" + std::to_string(pid) + "-AbCdEf");
  write_file(stale / "new" / "npu.patch", "stale\n");
  write_file(stale / "journal", "npu.patch\n");
  const RunResult made = make_patch(tmp / "tree", patches);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_FALSE(stdfs::exists(stale));
  EXPECT_NE(read_file(patches / "npu.patch"), "stale\n");
  expect_no_leftovers(patches);
}

}  // namespace
}  // namespace apexnpu::test
