// The checks that stand between libgit2 1.5.1 and what it mis-reads: loose objects (whole zlib
// stream, exactly the size the header claims), and the object directories alternates name (each
// once, however often and circularly they are named).
#include <gtest/gtest.h>
#include <zlib.h>

#include "git/alternates.h"
#include "git/loose_object_check.h"
#include "support/test_support.h"

namespace apexnpu::git {
namespace {

using test::TempDir;
using test::write_file;
namespace stdfs = std::filesystem;

std::string zlib(const std::string& bytes) {
  uLongf size = compressBound(static_cast<uLong>(bytes.size()));
  std::string out(size, '\0');
  compress(reinterpret_cast<Bytef*>(out.data()), &size, reinterpret_cast<const Bytef*>(bytes.data()),
           static_cast<uLong>(bytes.size()));
  out.resize(size);
  return out;
}

std::string object(const std::string& header, const std::string& body) {
  return zlib(header + std::string(1, '\0') + body);
}

TEST(LooseObjectCheck, AWholeObjectPasses) {
  EXPECT_FALSE(loose_object_damage(object("blob 5", "hello")));
  EXPECT_FALSE(loose_object_damage(object("blob 0", "")));
  EXPECT_FALSE(loose_object_damage(object("tree 200000", std::string(200000, 'x'))));
  EXPECT_FALSE(loose_object_damage(object("commit 3", "abc")));
}

TEST(LooseObjectCheck, EachDamageIsNamed) {
  auto damage = [](const std::string& bytes) { return loose_object_damage(bytes).value_or("(passed)"); };
  EXPECT_EQ(damage(object("blob 3", "hello")), "it holds more than the 3 bytes its header claims");
  EXPECT_EQ(damage(object("blob 9", "hello")), "it holds 5 bytes, fewer than the 9 its header claims");
  EXPECT_EQ(damage(object("blob", "hello")), "its header \"blob\" is not \"<type> <size>\"");
  EXPECT_EQ(damage(object("blob 5x", "hello")), "its header \"blob 5x\" is not \"<type> <size>\"");
  EXPECT_EQ(damage(object("wasp 5", "hello")), "its header \"wasp 5\" is not \"<type> <size>\"");
  EXPECT_EQ(damage(zlib(std::string(100, 'b'))), "its header is not \"<type> <size>\" (too long)");
  EXPECT_EQ(damage(zlib("blob 5")), "it ends inside its header");
  const std::string whole = object("blob 5000", std::string(5000, 'q'));
  EXPECT_EQ(damage(whole.substr(0, whole.size() - 3)), "its zlib data is cut short");
  EXPECT_EQ(damage("not zlib"), "its zlib data is damaged");
  EXPECT_EQ(damage(""), "its zlib data is cut short");
}

TEST(LooseObjectCheck, AZipBombStopsOneBytePastItsClaim) {
  // 256 MB of zeros behind a header that says 10: refused after inflating the first buffer.
  std::string bomb = "blob 10" + std::string(1, '\0') + std::string(std::size_t{256} << 20, '\0');
  const std::string compressed = zlib(bomb);
  bomb.clear();
  bomb.shrink_to_fit();
  EXPECT_EQ(loose_object_damage(compressed), "it holds more than the 10 bytes its header claims");
}

TEST(Alternates, EachDirectoryOnceHoweverOftenAndCircularlyNamed) {
  TempDir tmp;
  const stdfs::path main = tmp / "main" / "objects", other = tmp / "other" / "objects",
                    third = tmp / "third" / "objects";
  for (const auto& dir : {main, other, third}) stdfs::create_directories(dir / "info");
  std::string twenty;
  for (int i = 0; i < 20; ++i) twenty += other.string() + "\n";
  write_file(main / "info" / "alternates", "# a comment\n" + twenty + "../../third/objects\n");
  // other names main and itself back, and third; third names other.
  write_file(other / "info" / "alternates",
             main.string() + "\n" + other.string() + "\n" + third.string() + "\n");
  write_file(third / "info" / "alternates", other.string() + "\n");
  EXPECT_EQ(alternate_object_dirs(main),
            (std::vector<stdfs::path>{stdfs::canonical(other), stdfs::canonical(third)}));
}

TEST(Alternates, AreFollowedAsDeepAsGitFollowsThem) {
  TempDir tmp;
  std::vector<stdfs::path> dirs;
  for (int i = 0; i < 8; ++i) {
    dirs.push_back(tmp / ("r" + std::to_string(i)) / "objects");
    stdfs::create_directories(dirs.back() / "info");
  }
  for (int i = 0; i + 1 < 8; ++i) write_file(dirs[i] / "info" / "alternates", dirs[i + 1].string() + "\n");
  const std::vector<stdfs::path> found = alternate_object_dirs(dirs[0]);
  ASSERT_EQ(found.size(), 6u);  // r1..r6: as git and libgit2 follow them
  EXPECT_EQ(found.back(), stdfs::canonical(dirs[6]));
}

}  // namespace
}  // namespace apexnpu::git
