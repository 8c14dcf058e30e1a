// Reading upstream: refs of every kind, exact trees, local paths read in place, file:// through
// the cache (cloned once, fetched only when needed), --offline, and the cache lock.
#include "git/upstream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "core/data_dir.h"
#include "core/error.h"
#include "fs/file_io.h"
#include "support/fixture_repo.h"

namespace apexnpu::git {
namespace {

using test::FixtureRepo;
using test::TempDir;

class UpstreamTest : public ::testing::Test {
 protected:
  UpstreamTest() : repo(tmp / "up") {
    repo.write("a.py", "a\r\nb\r\n");
    repo.write("dir/sub/run.sh", "#!/bin/sh\n", true);
    repo.write("dir/nonl", "no newline");
    repo.symlink("dir/link", "../a.py");
    first = repo.commit("first");
    repo.tag("v1", first, true);
    repo.tag("light", first, false);
    repo.write("a.py", "changed\n");
    second = repo.commit("second");
    repo.branch("feature", first);
  }

  UpstreamTree read(const std::string& upstream, const std::string& ref, bool offline = false) {
    UpstreamRequest r;
    r.upstream = upstream;
    r.ref = ref;
    r.offline = offline;
    r.cache_dir = tmp / "cache";
    return read_upstream(r);
  }

  TempDir tmp;
  FixtureRepo repo;
  std::string first, second;
};

TEST_F(UpstreamTest, EveryKindOfRefResolves) {
  const std::string path = repo.dir().string();
  EXPECT_EQ(read(path, first).commit, first);
  EXPECT_EQ(read(path, first.substr(0, 7)).commit, first);
  EXPECT_EQ(read(path, "v1").commit, first);
  EXPECT_EQ(read(path, "light").commit, first);
  EXPECT_EQ(read(path, "feature").commit, first);
  EXPECT_EQ(read(path, "HEAD").commit, second);
  try {
    read(path, "nope");
    FAIL() << "an unknown ref must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
}

TEST_F(UpstreamTest, TreesAreReadExactlyAndInPlace) {
  const UpstreamTree t = read(repo.dir().string(), first);
  EXPECT_TRUE(t.read_in_place);
  EXPECT_FALSE(t.fetched);
  EXPECT_FALSE(std::filesystem::exists(tmp / "cache")) << "a local path is never cloned";
  EXPECT_EQ(t.tree.at("a.py").content, "a\r\nb\r\n");
  EXPECT_EQ(t.tree.at("dir/sub/run.sh").kind, FileKind::executable);
  EXPECT_EQ(t.tree.at("dir/nonl").content, "no newline");
  EXPECT_EQ(t.tree.at("dir/link").kind, FileKind::symlink);
  EXPECT_EQ(t.tree.at("dir/link").content, "../a.py");
  EXPECT_EQ(t.tree.size(), 4u);
}

TEST_F(UpstreamTest, FileUrlsAreClonedOnceAndFetchedOnlyWhenNeeded) {
  const UpstreamTree cloned = read(repo.url(), first);
  EXPECT_FALSE(cloned.read_in_place);
  EXPECT_TRUE(cloned.fetched);
  EXPECT_EQ(cloned.tree.at("a.py").content, "a\r\nb\r\n");
  EXPECT_FALSE(read(repo.url(), first).fetched) << "a full sha already in the cache needs no fetch";
  EXPECT_EQ(read(repo.url(), "feature").commit, first);
  EXPECT_EQ(read(repo.url(), "v1").commit, first);

  // A new upstream commit reaches the cache through a fetch for a branch ref.
  repo.write("a.py", "third\n");
  const std::string third = repo.commit("third");
  repo.branch("feature", third);
  const UpstreamTree fetched = read(repo.url(), "feature");
  EXPECT_TRUE(fetched.fetched);
  EXPECT_EQ(fetched.commit, third);
}

TEST_F(UpstreamTest, OfflineUsesTheCacheOnly) {
  EXPECT_THROW(read(repo.url(), first, true), Error) << "nothing cached yet";
  read(repo.url(), "HEAD");
  const UpstreamTree t = read(repo.url(), "v1", true);
  EXPECT_FALSE(t.fetched);
  EXPECT_EQ(t.commit, first);
  try {
    read(repo.url(), "never-made", true);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--offline"), std::string::npos) << e.what();
  }
}

TEST_F(UpstreamTest, ConcurrentReadersShareTheCacheSafely) {
  std::vector<std::string> commits(4);
  std::vector<std::thread> readers;
  for (int i = 0; i < 4; ++i) readers.emplace_back([&, i] { commits[i] = read(repo.url(), second).commit; });
  for (auto& t : readers) t.join();
  for (const auto& c : commits) EXPECT_EQ(c, second);
  EXPECT_FALSE(read(repo.url(), second, true).fetched);
}

TEST(RealUpstream, ThePinnedCommitIsReadInPlace) {
  const char* up = std::getenv("APEXNPU_TEST_UPSTREAM");
  if (up == nullptr || *up == '\0')
    GTEST_SKIP() << "APEXNPU_TEST_UPSTREAM is not set: point it at an NVIDIA Apex repository to run this";
  const auto pin_file = std::filesystem::path(APEXNPU_SOURCE_DIR) / "patches" / "UPSTREAM";
  const UpstreamPin pin = parse_upstream_pin(read_file(pin_file), pin_file.string());
  UpstreamRequest r;
  r.upstream = up;
  r.ref = pin.commit;
  const UpstreamTree t = read_upstream(r);
  EXPECT_EQ(t.commit, pin.commit);
  EXPECT_TRUE(t.tree.contains("apex/amp/frontend.py"));
  EXPECT_GT(t.tree.size(), 250u);
}

}  // namespace
}  // namespace apexnpu::git
