// A file:// upstream is cloned into the cache once; later runs use it, and --offline never goes
// to the network.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/fixture.h"

namespace apexnpu::test {
namespace {

class CacheTest : public ::testing::Test {
 protected:
  CacheTest() : upstream(tmp.path()) {}

  RunResult gen(const std::string& ref, const stdfs::path& cache, bool offline) {
    std::vector<std::string> args{"gen",     "--upstream",         upstream.repo.url(), "--ref",
                                  ref,       "--clone-cache",      cache.string(),      "--no-overlay",
                                  "--patch", empty_patch.string(), "--check",           "--json"};
    if (offline) args.push_back("--offline");
    return run_apexnpu(args, tmp / "home");
  }

  TempDir tmp;
  ApexLikeUpstream upstream;
  stdfs::path empty_patch = [this] {
    write_file(tmp / "empty.patch", "");
    return tmp / "empty.patch";
  }();
};

TEST_F(CacheTest, ClonesOnceThenReadsTheCache) {
  const stdfs::path cache = tmp / "cache";
  const RunResult first = gen(upstream.second, cache, false);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto a = nlohmann::json::parse(first.out);
  EXPECT_EQ(a["upstream"]["read_in_place"], false);
  EXPECT_EQ(a["upstream"]["fetched"], true);
  EXPECT_EQ(a["upstream"]["commit"], upstream.second);

  const RunResult second = gen(upstream.second, cache, false);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(nlohmann::json::parse(second.out)["upstream"]["fetched"], false);
}

TEST_F(CacheTest, OfflineWorksFromTheCacheOnly) {
  const stdfs::path cache = tmp / "cache";
  ASSERT_EQ(gen("dev", cache, false).exit_code, 0);
  const RunResult offline = gen(upstream.first, cache, true);
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_EQ(nlohmann::json::parse(offline.out)["upstream"]["commit"], upstream.first);

  const RunResult no_cache = gen(upstream.first, tmp / "empty-cache", true);
  EXPECT_EQ(no_cache.exit_code, 1);
  EXPECT_NE(no_cache.err.find("offline"), std::string::npos) << no_cache.err;
}

TEST_F(CacheTest, OfflineFailsClearlyForARefTheCacheLacks) {
  const stdfs::path cache = tmp / "cache";
  ASSERT_EQ(gen(upstream.first, cache, false).exit_code, 0);
  const RunResult r = gen("no-such-tag", cache, true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no-such-tag"), std::string::npos) << r.err;
}

// --clone-cache's older spelling on gen and make-patch, where it always named the clone cache.
TEST_F(CacheTest, CacheDirStillNamesTheCloneCacheOnGenAndMakePatch) {
  const stdfs::path cache = tmp / "old-spelling";
  const RunResult g =
      run_apexnpu({"gen", "--upstream", upstream.repo.url(), "--ref", upstream.first, "--cache-dir",
                   cache.string(), "--no-overlay", "--patch", empty_patch.string(), "--check", "--json"},
                  tmp / "home");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  const auto repository = nlohmann::json::parse(g.out)["upstream"]["repository"].get<std::string>();
  EXPECT_EQ(stdfs::path(repository).parent_path(), cache / "repos");

  const RunResult m = run_apexnpu({"make-patch", "--upstream", upstream.repo.url(), "--ref", upstream.first,
                                   "--tree", upstream.at_first.string(), "-o", (tmp / "patches").string(),
                                   "--offline", "--cache-dir", cache.string(), "--json"},
                                  tmp / "home");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto made = nlohmann::json::parse(m.out);
  EXPECT_EQ(made["upstream"]["repository"].get<std::string>(), repository);
  EXPECT_EQ(made["upstream"]["fetched"], false);
  EXPECT_FALSE(stdfs::exists(tmp / "home" / "cache" / "apexnpu")) << "the default cache was used";
}

}  // namespace
}  // namespace apexnpu::test
