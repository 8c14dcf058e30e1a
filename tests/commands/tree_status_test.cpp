// compare_with_commit: an edited tree against a real commit's blob ids, as make-patch sees it.
// A file whose bytes and kind match upstream's is skipped; any other difference is reported,
// including those a size check alone would miss.
#include "commands/tree_status.h"

#include <gtest/gtest.h>

#include "fs/tree_io.h"
#include "git/blob_id.h"
#include "git/object_id.h"
#include "git/upstream.h"
#include "support/fixture_repo.h"
#include "support/test_support.h"

namespace apexnpu::test {
namespace {

using commands::compare_with_commit;
using commands::HashedTree;
using commands::read_hashed_tree;
using commands::TreeStatus;
using Paths = std::vector<std::string>;

// The reference for read_hashed_tree: a tree already read, hashed one file after another.
HashedTree hash_tree(FileTree files) {
  HashedTree hashed{std::move(files), {}};
  hashed.ids.reserve(hashed.files.size());
  for (const auto& [path, entry] : hashed.files) hashed.ids.push_back(git::blob_id(entry.content));
  return hashed;
}

class TreeStatusTest : public ::testing::Test {
 protected:
  TreeStatusTest() : repo(tmp / "upstream") {
    repo.write("same.py", "unchanged\n");
    repo.write("same_size.py", "value = 1\n");
    repo.write("crlf.cpp", "x\r\ny\n");
    repo.write("crlf_same.cpp", "one\r\ntwo\r\n");
    repo.write("run.sh", "#!/bin/sh\n", true);
    repo.write("made_exec.sh", "#!/bin/sh\n");
    repo.write("gone.py", "deleted\n");
    repo.write("build/generated.py", "upstream keeps it; make-patch leaves build/ out\n");
    repo.symlink("link", "same.py");
    repo.symlink("retargeted", "aaa.py");
    repo.write("becomes_link", "same.py");
    sha = repo.commit("upstream");
    copy_work_tree(repo.dir(), edited);

    write_file(edited / "same_size.py", "value = 2\n");        // same size, other bytes
    write_file(edited / "crlf.cpp", "x\ny\r\n");               // line endings moved
    write_file(edited / "made_exec.sh", "#!/bin/sh\n", true);  // mode only
    stdfs::remove(edited / "gone.py");
    stdfs::remove_all(edited / "build");
    stdfs::remove(edited / "retargeted");
    stdfs::create_symlink("bbb.py", edited / "retargeted");  // same length target
    stdfs::remove(edited / "becomes_link");
    stdfs::create_symlink("same.py", edited / "becomes_link");  // target = old content
    write_file(edited / "new/added.py", "added\n");
  }

  TreeStatus status() {
    git::UpstreamRequest request;
    request.upstream = repo.dir().string();
    request.ref = sha;
    const git::UpstreamTree upstream = git::read_upstream(request, git::UpstreamContent::blob_ids);
    EXPECT_TRUE(upstream.tree.empty()) << "no upstream file is read";
    EXPECT_EQ(upstream.file_count(), 11u);
    const HashedTree hashed = read_hashed_tree(edited, fs::default_excludes());
    const HashedTree apart = hash_tree(fs::read_tree(edited, fs::default_excludes()));
    EXPECT_EQ(hashed.files, apart.files);
    EXPECT_TRUE(
        std::equal(hashed.ids.begin(), hashed.ids.end(), apart.ids.begin(), apart.ids.end(), git::same_id))
        << "hashed while read, or afterwards: the same ids";
    return compare_with_commit(upstream.blobs, hashed, fs::default_excludes());
  }

  TempDir tmp;
  FixtureRepo repo;
  std::string sha;
  stdfs::path edited = tmp / "edited";
};

TEST_F(TreeStatusTest, OnlyWhatDiffersIsReported) {
  const TreeStatus s = status();
  EXPECT_EQ(s.changed, (Paths{"becomes_link", "crlf.cpp", "made_exec.sh", "retargeted", "same_size.py"}));
  EXPECT_EQ(s.deleted, (Paths{"gone.py"})) << "build/ is excluded, not deleted";
  EXPECT_EQ(s.added, (Paths{"new/added.py"}));
}

TEST_F(TreeStatusTest, ATreeEqualToTheCommitHasNoDifference) {
  stdfs::remove_all(edited);
  copy_work_tree(repo.dir(), edited);
  stdfs::remove_all(edited / "build");
  const TreeStatus s = status();
  EXPECT_TRUE(s.changed.empty());
  EXPECT_TRUE(s.deleted.empty());
  EXPECT_TRUE(s.added.empty());
}

}  // namespace
}  // namespace apexnpu::test
