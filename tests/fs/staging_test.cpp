// What a killed run leaves beside an output is recognisably apexnpu's (.<output>.apexnpu-staging-
// <pid>-...), and the next run removes exactly that: only entries whose process is gone and
// whose lock is free; an old tree moved aside goes back where the output is missing; a directory
// update that had written its journal is finished, and readers meanwhile see its new entries.
#include "fs/staging.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs/directory_update.h"
#include "support/test_support.h"

namespace apexnpu::fs {
namespace {

using test::read_file;
using test::snapshot;
using test::TempDir;
using test::write_file;
namespace stdfs = std::filesystem;

// A pid no process has now: a child's, reaped.
pid_t gone_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

std::string staging_name(const std::string& output, const std::string& kind, pid_t pid) {
  return "." + output + ".apexnpu-" + kind + "-" + std::to_string(pid) + "-AbCdEf";
}

TEST(Staging, OnlyWhatAGoneProcessLeftIsRemoved) {
  TempDir tmp;
  const stdfs::path out = tmp / "out";
  const pid_t gone = gone_pid();
  write_file(tmp / staging_name("out", "staging", gone) / "x", "left by a killed run\n");
  write_file(tmp / staging_name("out", "staging", ::getpid()), "this run's own\n");
  write_file(tmp / ".out.apexnpu-something-else", "not ours to judge\n");
  write_file(tmp / ".other.apexnpu-staging-1-AbCdEf" / "y", "another output's\n");
  const StagingDir live(out);  // this process, alive and holding its lock
  remove_stale_staging(out);
  EXPECT_FALSE(stdfs::exists(tmp / staging_name("out", "staging", gone)));
  EXPECT_TRUE(stdfs::exists(tmp / staging_name("out", "staging", ::getpid())));
  EXPECT_TRUE(stdfs::exists(tmp / ".out.apexnpu-something-else"));
  EXPECT_TRUE(stdfs::exists(tmp / ".other.apexnpu-staging-1-AbCdEf"));
  EXPECT_TRUE(stdfs::exists(live.path()));
}

TEST(Staging, AnOldTreeMovedAsideGoesBackWhereTheOutputIsMissing) {
  TempDir tmp;
  const pid_t gone = gone_pid();
  write_file(tmp / staging_name("out", "aside", gone) / "old.txt", "the old tree\n");
  remove_stale_staging(tmp / "out");
  EXPECT_EQ(read_file(tmp / "out" / "old.txt"), "the old tree\n");
  // With an output in place, an aside copy is only removed.
  write_file(tmp / staging_name("out", "aside", gone) / "old.txt", "older\n");
  remove_stale_staging(tmp / "out");
  EXPECT_EQ(read_file(tmp / "out" / "old.txt"), "the old tree\n");
  EXPECT_EQ(snapshot(tmp.path()), (std::map<std::string, std::string>{{"out/old.txt", "the old tree\n"}}));
}

TEST(DirectoryUpdate, PutsEntriesInPlaceTogether) {
  TempDir tmp;
  const stdfs::path dir = tmp / "patches";
  write_file(dir / "npu.patch", "old patch\n");
  write_file(dir / "overlay" / "old.py", "old\n");
  write_file(dir / "UPSTREAM", "untouched\n");
  {
    DirectoryUpdate update(dir);
    write_file(update.staged("npu.patch"), "new patch\n");
    write_file(update.staged("overlay") / "new.py", "new\n");
    write_file(update.scratch() / "tmp", "never put in place\n");
    update.commit({"npu.patch", "overlay"});
  }
  EXPECT_EQ(snapshot(dir),
            (std::map<std::string, std::string>{
                {"npu.patch", "new patch\n"}, {"overlay/new.py", "new\n"}, {"UPSTREAM", "untouched\n"}}));
  EXPECT_EQ(snapshot(tmp.path()).size(), 3u) << "nothing left beside it";
}

TEST(DirectoryUpdate, DroppedItLeavesNothingNotEvenTheParentsItMade) {
  TempDir tmp;
  {
    DirectoryUpdate update(tmp / "a" / "b" / "out");
    write_file(update.staged("x"), "x\n");
  }
  EXPECT_FALSE(stdfs::exists(tmp / "a"));
}

TEST(DirectoryUpdate, ACommitKilledAfterItsJournalIsFinishedAndReadersSeeTheNewEntries) {
  TempDir tmp;
  const stdfs::path dir = tmp / "patches";
  write_file(dir / "npu.patch", "old patch\n");
  write_file(dir / "overlay" / "old.py", "old\n");
  // A killed update: the patch already moved in, the overlay still waiting.
  const stdfs::path staging = tmp / staging_name("patches", "staging", gone_pid());
  write_file(staging / "journal", "npu.patch\noverlay\n");
  write_file(staging / "new" / "overlay" / "new.py", "new\n");
  write_file(staging / "old" / "npu.patch", "old patch\n");
  write_file(dir / "npu.patch", "new patch\n");
  EXPECT_EQ(committed_entry(dir / "npu.patch"), dir / "npu.patch");
  EXPECT_EQ(committed_entry(dir / "overlay"), staging / "new" / "overlay");
  // Without a journal nothing was decided: readers keep the entries in place.
  write_file(tmp / staging_name("patches", "staging", gone_pid()) / "new" / "npu.patch", "undecided\n");
  EXPECT_EQ(committed_entry(dir / "npu.patch"), dir / "npu.patch");

  remove_stale_staging(dir);
  EXPECT_EQ(snapshot(dir),
            (std::map<std::string, std::string>{{"npu.patch", "new patch\n"}, {"overlay/new.py", "new\n"}}));
  EXPECT_EQ(snapshot(tmp.path()).size(), 2u) << "both killed runs' staging removed";
}

TEST(DirectoryUpdate, TakesOutTheEntriesItDrops) {
  TempDir tmp;
  const stdfs::path dir = tmp / "tree";
  write_file(dir / "kept.py", "old\n");
  write_file(dir / "gone" / "x.py", "x\n");
  {
    DirectoryUpdate update(dir);
    write_file(update.staged("kept.py"), "new\n");
    update.commit({"kept.py"}, {"gone"});
  }
  EXPECT_EQ(snapshot(dir), (std::map<std::string, std::string>{{"kept.py", "new\n"}}));
  EXPECT_EQ(snapshot(tmp.path()).size(), 1u) << "nothing left beside it";
}

// A killed update that can never be finished (here a rename that fails every time; on a mount
// point, one across file systems): the next run undoes what it had moved and removes it, instead
// of leaving it beside the output for ever (issue 44, point 4).
TEST(DirectoryUpdate, AKilledUpdateThatCannotBeFinishedIsUndoneAndRemoved) {
  TempDir tmp;
  const stdfs::path dir = tmp / "patches";
  write_file(dir / "overlay" / "old.py", "old\n");
  const stdfs::path staging = tmp / staging_name("patches", "staging", gone_pid());
  write_file(staging / "journal", "npu.patch\nmissing/x\n");
  write_file(staging / "new" / "missing" / "x", "cannot be moved: its directory is not there\n");
  write_file(staging / "old" / "npu.patch", "old patch\n");
  write_file(dir / "npu.patch", "new patch\n");  // moved in before the kill
  const stdfs::path other = tmp / staging_name("patches", "staging", gone_pid());
  write_file(other / "new" / "npu.patch", "undecided\n");

  remove_stale_staging(dir);
  EXPECT_EQ(snapshot(dir),
            (std::map<std::string, std::string>{{"npu.patch", "old patch\n"}, {"overlay/old.py", "old\n"}}));
  EXPECT_EQ(snapshot(tmp.path()).size(), 2u) << "both killed runs' staging removed";
}

}  // namespace
}  // namespace apexnpu::fs
