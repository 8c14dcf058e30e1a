// blob_id: the object id git gives a file's content (`git hash-object`), which make-patch compares
// with upstream's tree to skip unchanged files. Checked against ids git printed and against
// libgit2's own hashing of the same bytes.
#include "git/blob_id.h"

#include <gtest/gtest.h>

#include <random>

#include "git/libgit2.h"

namespace apexnpu::git {
namespace {

std::string hex(const git_oid& id) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, &id);
  return text;
}

TEST(BlobId, IsWhatGitHashObjectPrints) {
  EXPECT_EQ(hex(blob_id("")), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  EXPECT_EQ(hex(blob_id("hello\n")), "ce013625030ba8dba906f756967f9e9ca394464a");
  EXPECT_EQ(hex(blob_id("a\r\nb\r\n")), "c30dea8a3641ea99b125d04d599d843712292759") << "CRLF kept as is";
}

TEST(BlobId, AgreesWithLibgit2OnAnyBytes) {
  (void)libgit2();
  std::mt19937 rng(13);
  for (std::size_t size : {1u, 55u, 56u, 63u, 64u, 65u, 1000u, 65536u, 300001u}) {
    std::string bytes(size, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    git_oid expected;
    ASSERT_EQ(git_odb_hash(&expected, bytes.data(), bytes.size(), GIT_OBJECT_BLOB), 0);
    EXPECT_EQ(hex(blob_id(bytes)), hex(expected)) << size << " bytes";
  }
}

}  // namespace
}  // namespace apexnpu::git
