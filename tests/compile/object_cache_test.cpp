// The object cache's manifests: a hit only while every header the compiler read still has the
// content it had, headers reached through symlinks included, and a damaged manifest a miss.
#include "compile/object_cache.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_support.h"

namespace apexnpu::compile {
namespace {

using test::TempDir;
namespace stdfs = std::filesystem;

// Stores an object for `source_key` whose compile read `header`; returns its stored path.
stdfs::path store(ObjectCache& cache, const std::string& source_key, const stdfs::path& header) {
  const stdfs::path object = cache.scratch_path(".o");
  test::write_file(object, "object code");
  return cache.store_object(source_key, object, "out.o: a.cpp " + header.string() + "\n").second;
}

TEST(ObjectCache, AHeaderBehindASymlinkIsHashedByWhatItPointsTo) {
  TempDir tmp;
  test::write_file(tmp / "real/config.h", "#define A 1\n");
  stdfs::create_directories(tmp / "include");
  stdfs::create_symlink(tmp / "real/config.h", tmp / "include/config.h");
  ObjectCache first(tmp / "cache");
  const stdfs::path stored = store(first, "k1", tmp / "include/config.h");

  ObjectCache cache(tmp / "cache");  // a later build: nothing memoised
  EXPECT_EQ(cache.lookup_object("k1"), std::optional<stdfs::path>(stored));

  test::write_file(tmp / "real/config.h", "#define A 2\n");  // the link's target changes
  EXPECT_FALSE(ObjectCache(tmp / "cache").lookup_object("k1"));
  stdfs::remove(tmp / "real/config.h");  // the link now points at nothing: a miss, no error
  EXPECT_FALSE(ObjectCache(tmp / "cache").lookup_object("k1"));
}

TEST(ObjectCache, ADamagedManifestIsAMiss) {
  TempDir tmp;
  test::write_file(tmp / "a.h", "int a;\n");
  ObjectCache cache(tmp / "cache");
  store(cache, "k2", tmp / "a.h");
  ASSERT_TRUE(ObjectCache(tmp / "cache").lookup_object("k2"));
  const stdfs::path manifest = tmp / "cache/manifests/k2/k2.json";
  ASSERT_TRUE(stdfs::is_regular_file(manifest));
  for (const char* damaged : {"{\"object\": \"ab", "[]", "{\"object\": 1, \"headers\": []}",
                              "{\"object\": \"ab\", \"headers\": [[\"a.h\"]]}"}) {
    test::write_file(manifest, damaged);
    EXPECT_FALSE(ObjectCache(tmp / "cache").lookup_object("k2")) << damaged;
  }
}

TEST(ObjectCache, AHeaderThatIsThereButUnreadableIsAnError) {
  TempDir tmp;
  stdfs::create_directories(tmp / "a.h");  // a directory where the compiler read a header
  ObjectCache cache(tmp / "cache");
  EXPECT_THROW(store(cache, "k3", tmp / "a.h"), Error);
}

}  // namespace
}  // namespace apexnpu::compile
