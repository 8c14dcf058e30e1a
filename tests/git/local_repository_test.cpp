// The native reader against libgit2 on repositories made by the tests: loose objects, packs
// with deep delta chains (git repack), packed refs, annotated tags, alternates; what it declines
// (libgit2 decides then) and damage it reports.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <fstream>
#include <functional>

#include "core/error.h"
#include "git/delta.h"
#include "git/libgit2.h"
#include "git/local_repository.h"
#include "git/tree_reader.h"
#include "git/upstream.h"
#include "git/zlib_inflate.h"
#include "support/fixture_repo.h"

namespace apexnpu::git {
namespace {

using test::FixtureRepo;
using test::TempDir;

void git_cli(const std::filesystem::path& repo, const std::vector<std::string>& args) {
  std::vector<std::string> all = {"-C", repo.string()};
  all.insert(all.end(), args.begin(), args.end());
  const auto r = test::run_process("git", all, {"GIT_CONFIG_NOSYSTEM=1", "HOME=" + repo.string()});
  ASSERT_EQ(r.exit_code, 0) << "git " << args.front() << ": " << r.err;
}

// What libgit2 reads: the commit `ref` resolves to and every file of its tree.
struct Libgit2Read {
  std::string commit;
  FileTree files;
};
Libgit2Read read_with_libgit2(const std::filesystem::path& path, const std::string& ref) {
  (void)libgit2();
  git_repository* raw = nullptr;
  check(git_repository_open_ext(&raw, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr), "open");
  Repository repo(raw);
  Commit commit = resolve_commit(repo.get(), ref);
  if (!commit) return {};
  std::vector<std::string> skipped;
  return {commit_sha(commit.get()), read_commit_tree(repo.get(), commit.get(), skipped)};
}

class LocalRepositoryTest : public ::testing::Test {
 protected:
  LocalRepositoryTest() : repo(tmp / "up") {
    // A file rewritten a little in every commit gives git long delta chains once repacked.
    std::string big;
    for (int line = 0; line < 400; ++line) big += "line " + std::to_string(line * 7919 % 1000) + "\n";
    repo.write("dir/sub/run.sh", "#!/bin/sh\necho hi\n", true);
    repo.write("crlf.txt", "a\r\nb\r\n");
    repo.write("empty", "");
    repo.symlink("dir/link", "../crlf.txt");
    for (int version = 0; version < 60; ++version) {
      big.replace(static_cast<std::size_t>(version) * 10, 4, "EDIT");
      repo.write("big.py", big);
      repo.write(fmt::format("dir/v{}.txt", version % 7), std::to_string(version));
      commits.push_back(repo.commit(fmt::format("v{}", version)));
    }
    repo.tag("annotated", commits[3], true);
    repo.tag("light", commits[4], false);
    repo.branch("feature", commits[5]);
  }

  // Every ref, read both ways, must give the same commit and the same files.
  void expect_same_as_libgit2(const std::vector<std::string>& refs) {
    const auto local = LocalRepository::open(repo.dir());
    ASSERT_TRUE(local);
    for (const std::string& ref : refs) {
      SCOPED_TRACE(ref);
      const auto commit = local->resolve_commit(ref);
      ASSERT_TRUE(commit);
      const Libgit2Read expected = read_with_libgit2(repo.dir(), ref);
      EXPECT_EQ(to_hex(*commit), expected.commit);
      std::vector<std::string> skipped;
      EXPECT_EQ(local->read_commit_tree(*commit, skipped), expected.files);
    }
  }

  std::vector<std::string> every_kind_of_ref() const {
    return {commits[10], commits[0].substr(0, 9), "annotated", "light", "feature", "HEAD",
            "master", "refs/tags/annotated", commits.back()};
  }

  TempDir tmp;
  FixtureRepo repo;
  std::vector<std::string> commits;
};

TEST_F(LocalRepositoryTest, LooseObjectsReadAsLibgit2ReadsThem) {
  expect_same_as_libgit2(every_kind_of_ref());
}

TEST_F(LocalRepositoryTest, PacksWithDeepDeltaChainsAndPackedRefsReadAsLibgit2ReadsThem) {
  git_cli(repo.dir(), {"repack", "-a", "-d", "-f", "--depth=50", "--window=250", "-q"});
  git_cli(repo.dir(), {"pack-refs", "--all"});
  git_cli(repo.dir(), {"prune-packed"});
  ASSERT_FALSE(std::filesystem::exists(repo.dir() / ".git/refs/tags/annotated"));
  std::string idx;
  for (const auto& e : std::filesystem::directory_iterator(repo.dir() / ".git/objects/pack"))
    if (e.path().extension() == ".idx") idx = e.path().string();
  const auto verify = test::run_process("git", {"-C", repo.dir().string(), "verify-pack", "-v", idx});
  ASSERT_NE(verify.out.find("chain length = 20"), std::string::npos) << "no deep chains:\n" << verify.out;
  expect_same_as_libgit2(every_kind_of_ref());
  // Half the history in one pack, the rest in another and loose: every object still found.
  repo.write("late.txt", "late\n");
  commits.push_back(repo.commit("late"));
  git_cli(repo.dir(), {"repack", "-d", "-q"});
  repo.write("later.txt", "later\n");
  commits.push_back(repo.commit("later"));
  expect_same_as_libgit2(every_kind_of_ref());
}

TEST_F(LocalRepositoryTest, AlternatesAndBareRepositoriesAreRead) {
  git_cli(repo.dir(), {"repack", "-a", "-d", "-q"});
  const auto shared = tmp / "shared.git";
  const auto r = test::run_process("git", {"clone", "-q", "--bare", "--shared", repo.dir().string(), shared.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(shared / "objects/info/alternates"));
  const auto local = LocalRepository::open(shared);
  ASSERT_TRUE(local);
  const auto commit = local->resolve_commit("feature");
  ASSERT_TRUE(commit);
  EXPECT_EQ(to_hex(*commit), commits[5]);
  std::vector<std::string> skipped;
  EXPECT_EQ(local->read_commit_tree(*commit, skipped), read_with_libgit2(repo.dir(), commits[5]).files);
}

TEST_F(LocalRepositoryTest, WhatItCannotTellIsLeftToLibgit2) {
  const auto local = LocalRepository::open(repo.dir());
  ASSERT_TRUE(local);
  EXPECT_FALSE(local->resolve_commit("nope"));
  EXPECT_FALSE(local->resolve_commit("HEAD~1"));        // an expression: libgit2's revparse
  EXPECT_FALSE(local->resolve_commit("../../etc"));     // not a ref name git allows
  EXPECT_FALSE(local->resolve_commit("dir"));           // a tree, not a commit
  EXPECT_FALSE(local->resolve_commit(std::string(40, '0')));
  // SHA-256 repositories and reftable refs are libgit2's to read (or refuse).
  std::ofstream(repo.dir() / ".git/config", std::ios::app) << "[extensions]\n\tobjectFormat = sha256\n";
  EXPECT_FALSE(LocalRepository::open(repo.dir()));
  EXPECT_FALSE(LocalRepository::open(tmp / "missing"));
}

TEST_F(LocalRepositoryTest, ReadUpstreamUsesLibgit2ForWhatTheNativeReaderDeclines) {
  UpstreamRequest request;
  request.upstream = repo.dir().string();
  request.ref = "HEAD~2";
  const UpstreamTree expression = read_upstream(request);
  EXPECT_EQ(expression.commit, commits[commits.size() - 3]);
  EXPECT_FALSE(expression.local);
  EXPECT_EQ(expression.tree, read_with_libgit2(repo.dir(), commits[commits.size() - 3]).files);
  request.ref = "feature";
  const UpstreamTree name = read_upstream(request, UpstreamContent::blob_ids);
  EXPECT_EQ(name.commit, commits[5]);
  EXPECT_TRUE(name.local);
}

TEST_F(LocalRepositoryTest, ADamagedPackIsReportedByName) {
  git_cli(repo.dir(), {"repack", "-a", "-d", "-q"});
  std::filesystem::path pack;
  for (const auto& e : std::filesystem::directory_iterator(repo.dir() / ".git/objects/pack"))
    if (e.path().extension() == ".pack") pack = e.path();
  ASSERT_FALSE(pack.empty());
  // Overwrite the middle of the pack: zlib data there no longer inflates.
  std::string bytes = test::read_file(pack);
  for (std::size_t i = bytes.size() / 4; i < bytes.size() - 20; ++i) bytes[i] = static_cast<char>(i * 31);
  std::filesystem::permissions(pack, std::filesystem::perms::owner_all);
  test::write_file(pack, bytes);
  const auto local = LocalRepository::open(repo.dir());
  ASSERT_TRUE(local);
  try {
    const auto commit = local->resolve_commit(commits.back());
    std::vector<std::string> skipped;
    if (commit) local->read_commit_tree(*commit, skipped);
    FAIL() << "a damaged pack must not read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(pack.filename().string()), std::string::npos) << e.what();
  }
}

TEST(MissingBlobs, BothReadersReportTheFirstListedPathThatFailed) {
  // 80 files, so libgit2's reader spreads them over its threads too; two blobs removed, the first
  // listed on one thread, the other on another: the error names the first, whichever thread
  // reached its blob sooner.
  TempDir tmp;
  FixtureRepo repo(tmp / "up");
  for (int i = 0; i < 80; ++i) repo.write(fmt::format("f{:02}", i), fmt::format("file {}\n", i));
  const std::string sha = repo.commit("many");
  for (const char* path : {"f42", "f05"}) {
    const auto r = test::run_process("git", {"-C", repo.dir().string(), "rev-parse", fmt::format("{}:{}", sha, path)},
                                     {"GIT_CONFIG_NOSYSTEM=1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string id = r.out.substr(0, 40);
    ASSERT_TRUE(std::filesystem::remove(repo.dir() / ".git/objects" / id.substr(0, 2) / id.substr(2)));
  }
  auto expect_f05 = [](const std::function<void()>& read, const char* reader) {
    try {
      read();
      ADD_FAILURE() << reader << " read a tree with missing blobs";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("f05"), std::string::npos) << reader << ": " << e.what();
      EXPECT_EQ(e.hint(), "the repository is incomplete; fetch it again") << reader;
    }
  };
  expect_f05([&] { read_with_libgit2(repo.dir(), sha); }, "libgit2");
  const auto local = LocalRepository::open(repo.dir());
  ASSERT_TRUE(local);
  expect_f05(
      [&] {
        std::vector<std::string> skipped;
        local->read_commit_tree(*local->resolve_commit(sha), skipped);
      },
      "native");
}

TEST(Inflate, ASizeTheDataCannotHoldIsRefusedWithoutReservingIt) {
  // "abc" deflated; a damaged pack header may claim 4 GiB for it (found by the fuzzer as an
  // out-of-memory: the whole claimed size used to be allocated first).
  const std::string abc("\x78\x9c\x4b\x4c\x4a\x06\x00\x02\x4d\x01\x27", 11);
  const auto* in = reinterpret_cast<const unsigned char*>(abc.data());
  EXPECT_EQ(inflate_exact(in, abc.size(), 3, "t"), "abc");
  EXPECT_THROW(inflate_exact(in, abc.size(), std::size_t{4} << 30, "t"), Error);
  EXPECT_THROW(inflate_exact(in, abc.size(), 2, "t"), Error);
  EXPECT_THROW(inflate_exact(in, abc.size() - 3, 3, "t"), Error);
}

TEST(Delta, CopiesAndInsertsAndRefusesWhatDoesNotFit) {
  const std::string base = "0123456789";
  // base size 10, result size 7: copy 4 bytes from offset 2, insert "xyz"
  const std::string delta = std::string("\x0a\x07", 2) + "\x91\x02\x04" + "\x03xyz";
  EXPECT_EQ(apply_delta(base, delta, "t"), "2345xyz");
  EXPECT_THROW(apply_delta("012", delta, "t"), Error);                           // another base
  EXPECT_THROW(apply_delta(base, std::string("\x0a\x07\x91\x08\x04", 5), "t"), Error);  // past the base
  EXPECT_THROW(apply_delta(base, std::string("\x0a\x07\x03xy", 5), "t"), Error);  // cut short
  EXPECT_THROW(apply_delta(base, std::string("\x0a\x02\x00", 3), "t"), Error);    // reserved op
  EXPECT_THROW(apply_delta(base, std::string("\x0a\x01\x02xy", 5), "t"), Error);  // too long
}

}  // namespace
}  // namespace apexnpu::git
