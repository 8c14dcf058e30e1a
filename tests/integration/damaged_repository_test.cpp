// Damaged and hostile repositories, made by the tests: every one is refused with exit 1 and a
// message naming what is damaged and where, nothing written, no crash, no hang, never a wrong
// tree (issue 26: cases 2 to 6 and 14). Each case is one libgit2 1.5.1 mis-reads (overflow,
// loop, crash) or one the toolchain used to mis-report.
#include <gtest/gtest.h>

#include <fstream>

#include "integration/support.h"
#include "support/pack_writer.h"

namespace apexnpu::test {
namespace {

constexpr int kCommit = 1, kTree = 2, kBlob = 3, kRefDelta = 7;

std::string raw_id(const git_oid& id) { return std::string(reinterpret_cast<const char*>(id.id), 20); }

std::string hex(const git_oid& id) {
  char text[GIT_OID_HEXSZ + 1];
  git_oid_tostr(text, sizeof text, &id);
  return text;
}

// A bare repository built object by object: a commit of a tree holding a.txt and b.txt, whose
// blobs each case stores its own way (loose, packed, damaged).
class DamagedRepository : public ::testing::Test {
 protected:
  DamagedRepository() {
    git_libgit2_init();
    for (const char* dir : {"objects/info", "objects/pack", "refs/heads", "refs/tags"})
      stdfs::create_directories(repo / dir);
    write_file(repo / "HEAD", "ref: refs/heads/main\n");
    write_file(repo / "config", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n");
    a_id = object_id(kBlob, a);
    b_id = object_id(kBlob, b);
    const git_oid tree = write_loose(objects, kTree,
                                     "100644 a.txt" + std::string(1, '\0') + raw_id(a_id) + "100644 b.txt" +
                                         std::string(1, '\0') + raw_id(b_id));
    commit = hex(write_loose(objects, kCommit,
                             "tree " + hex(tree) +
                                 "\nauthor A <a@example.invalid> 1700000000 +0000\n"
                                 "committer A <a@example.invalid> 1700000000 +0000\n\nfixture\n"));
    write_file(repo / "refs/heads/main", commit + "\n");
    write_file(tmp / "empty.patch", "");
    copy_tree_of_b_edited();
  }
  ~DamagedRepository() override { git_libgit2_shutdown(); }

  // The edited tree make-patch reads: a.txt as upstream has it, b.txt changed (so upstream's
  // b.txt is read and diffed).
  void copy_tree_of_b_edited() {
    write_file(edited / "a.txt", a);
    write_file(edited / "b.txt", b + "an npu line\n");
  }

  RunResult gen() {
    return run_apexnpu({"gen", "--upstream", repo.string(), "--ref", commit, "--patch",
                        (tmp / "empty.patch").string(), "--no-overlay", "-o", (tmp / "out").string()},
                       tmp / "home");
  }
  RunResult make_patch() {
    return run_apexnpu({"make-patch", "--upstream", repo.string(), "--ref", commit, "--tree", edited.string(),
                        "-o", (tmp / "patches").string()},
                       tmp / "home");
  }

  // Refused: exit 1 (not a signal, not a timeout), the message naming each of `says`, nothing written.
  void expect_refused(const RunResult& r, const std::vector<std::string>& says) {
    EXPECT_EQ(r.exit_code, 1) << r.err;
    for (const auto& s : says)
      EXPECT_NE(r.err.find(s), std::string::npos) << "missing \"" << s << "\" in: " << r.err;
    EXPECT_EQ(r.err.find("is not in the upstream repository"), std::string::npos) << r.err;
    EXPECT_FALSE(stdfs::exists(tmp / "out"));
    EXPECT_FALSE(stdfs::exists(tmp / "patches" / "npu.patch"));
  }

  void both_refused(const std::vector<std::string>& says) {
    expect_refused(gen(), says);
    expect_refused(make_patch(), says);
  }

  TempDir tmp;
  stdfs::path repo = tmp / "upstream.git";
  stdfs::path objects = repo / "objects";
  stdfs::path edited = tmp / "edited";
  const std::string a = "content of a\n";
  const std::string b = "content of b, another file\n";
  git_oid a_id{}, b_id{};
  std::string commit;
};

TEST_F(DamagedRepository, IntactItReadsAndRoundTrips) {
  write_loose(objects, kBlob, a);
  write_loose(objects, kBlob, b);
  const RunResult r = gen();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(tmp / "out" / "b.txt"), b);
  const RunResult made = make_patch();
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(read_file(tmp / "patches" / "npu.patch").find("+an npu line"), std::string::npos);
}

// Case 2 (libgit2 issue 7177): a header claiming fewer bytes than the object holds made libgit2
// write past the buffer it sized from the claim.
TEST_F(DamagedRepository, ALooseObjectHoldingMoreThanItsHeaderClaimsIsRefused) {
  write_loose(objects, kBlob, a);
  write_file(loose_path(objects, b_id), zlib("blob 3" + std::string(1, '\0') + b));
  both_refused({loose_path(objects, b_id).string(), "more than the 3 bytes its header claims"});
}

TEST_F(DamagedRepository, ALooseObjectHoldingLessThanItsHeaderClaimsIsRefused) {
  write_loose(objects, kBlob, a);
  write_file(loose_path(objects, b_id), zlib("blob 300" + std::string(1, '\0') + b));
  both_refused({loose_path(objects, b_id).string(), "fewer than the 300 its header claims"});
}

// Case 4: a truncated loose object made libgit2 loop for ever.
TEST_F(DamagedRepository, ATruncatedLooseObjectIsRefusedAtOnce) {
  write_loose(objects, kBlob, a);
  const std::string whole = zlib("blob " + std::to_string(b.size()) + std::string(1, '\0') + b);
  write_file(loose_path(objects, b_id), whole.substr(0, whole.size() / 2));
  both_refused({loose_path(objects, b_id).string(), "cut short"});
}

// Case 4: a loose "zip bomb" (tens of megabytes of zeros behind a header that says 10) took
// gigabytes and then crashed libgit2; the check stops one byte past the claim.
TEST_F(DamagedRepository, ALooseZipBombIsRefusedWithoutInflatingIt) {
  write_loose(objects, kBlob, a);
  write_file(loose_path(objects, b_id), zlib("blob 10" + std::string(1, '\0') + std::string(64 << 20, '\0')));
  both_refused({loose_path(objects, b_id).string(), "more than the 10 bytes its header claims"});
}

TEST_F(DamagedRepository, ALooseObjectThatIsNotZlibIsRefused) {
  write_loose(objects, kBlob, a);
  write_file(loose_path(objects, b_id), "this is not zlib data at all");
  both_refused({loose_path(objects, b_id).string(), "zlib data is damaged"});
}

// Case 3: two ref-deltas, each the other's base. In one pack libgit2 followed them for ever.
TEST_F(DamagedRepository, RefDeltasThatAreEachOthersBaseInOnePackAreRefused) {
  const stdfs::path index = write_pack(objects, "cycle",
                                       {{a_id, kRefDelta, insert_delta(b.size(), a), b_id},
                                        {b_id, kRefDelta, insert_delta(a.size(), b), a_id}});
  both_refused({index.string(), "delta chain returns"});
}

TEST_F(DamagedRepository, ARefDeltaThatIsItsOwnBaseIsRefused) {
  write_loose(objects, kBlob, b);
  const stdfs::path index = write_pack(objects, "self", {{a_id, kRefDelta, insert_delta(a.size(), a), a_id}});
  const RunResult r = gen();
  expect_refused(r, {index.string(), "delta chain returns"});
}

// ... and across two packs (what the issue measured) libgit2 refuses by itself, cleanly.
TEST_F(DamagedRepository, RefDeltasThatAreEachOthersBaseInTwoPacksAreRefused) {
  write_pack(objects, "one", {{a_id, kRefDelta, insert_delta(b.size(), a), b_id}});
  write_pack(objects, "two", {{b_id, kRefDelta, insert_delta(a.size(), b), a_id}});
  both_refused({"not in the same pack"});
}

class DamagedIndex : public DamagedRepository {
 protected:
  DamagedIndex() {
    index = write_pack(objects, "good", {{a_id, kBlob, a, {}}, {b_id, kBlob, b, {}}});
    bytes = read_file(index);
  }
  // Index entry i's 4-byte offset, its first byte xor `flip`.
  void flip_offset(std::size_t i, unsigned char flip) {
    std::string damaged = bytes;
    damaged[index_offset_position(index, i)] ^= static_cast<char>(flip);
    write_file(index, damaged);
  }
  stdfs::path index;
  std::string bytes;
};

TEST_F(DamagedIndex, IntactItReads) { EXPECT_EQ(gen().exit_code, 0); }

// Case 4: an offset with its high byte flipped crashed libgit2 (it maps whatever offset it is
// given) or said "failed to mmap. Could not write data" (case 14).
TEST_F(DamagedIndex, AnOffsetPastThePacksEndIsRefusedNamingTheIndex) {
  for (const unsigned char flip : {0x01, 0x10, 0x40}) {
    flip_offset(1, flip);
    const RunResult r = gen();
    expect_refused(r, {index.string(), "outside its pack"});
    EXPECT_EQ(r.err.find("mmap"), std::string::npos) << r.err;
    expect_refused(make_patch(), {index.string(), "outside its pack"});
  }
}

// The high bit sends the offset to the table of large offsets, which this index does not have;
// libgit2 said "object not found", and the ref "is not in the repository" (case 14).
TEST_F(DamagedIndex, AnOffsetIntoAMissingLargeOffsetTableIsRefused) {
  flip_offset(0, 0x80);
  both_refused({index.string(), "large offsets"});
}

// Case 5: two offsets swapped. The native reader gave one file the other's content; libgit2
// checks every object against its id.
TEST_F(DamagedIndex, SwappedOffsetsAreFoundByTheirIds) {
  std::string damaged = bytes;
  const std::size_t first = index_offset_position(index, 0), second = index_offset_position(index, 1);
  for (int k = 0; k < 4; ++k) std::swap(damaged[first + k], damaged[second + k]);
  write_file(index, damaged);
  both_refused({"hash mismatch"});
}

// Case 6: an alternates file naming one directory twenty times, and two repositories naming
// each other: each directory is visited once, and the objects read as usual.
TEST_F(DamagedRepository, AlternatesNamingOneDirectoryManyTimesReadOnce) {
  const stdfs::path shared = tmp / "shared" / "objects";
  stdfs::create_directories(shared / "info");
  write_loose(shared, kBlob, a);
  write_loose(shared, kBlob, b);
  std::string lines;
  for (int i = 0; i < 20; ++i) lines += shared.string() + "\n";
  write_file(objects / "info" / "alternates", lines);
  write_file(shared / "info" / "alternates", objects.string() + "\n" + lines);
  const RunResult r = gen();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(tmp / "out" / "a.txt"), a);
  EXPECT_EQ(make_patch().exit_code, 0);
}

// Case 14: what is wrong is said as it is: a ref whose commit is missing is not "not in the
// repository", and a ref that is not there is.
TEST_F(DamagedRepository, AMissingObjectIsNotAnUnknownRef) {
  write_loose(objects, kBlob, a);
  write_loose(objects, kBlob, b);
  write_file(repo / "refs/heads/main", std::string(40, '1') + "\n");
  const RunResult missing =
      run_apexnpu({"gen", "--upstream", repo.string(), "--ref", "main", "--patch",
                   (tmp / "empty.patch").string(), "--no-overlay", "-o", (tmp / "out").string()},
                  tmp / "home");
  expect_refused(missing, {"the ref main", "cannot be read", std::string(40, '1')});
  const RunResult unknown =
      run_apexnpu({"gen", "--upstream", repo.string(), "--ref", "no-such-branch", "--patch",
                   (tmp / "empty.patch").string(), "--no-overlay", "-o", (tmp / "out").string()},
                  tmp / "home");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no-such-branch is not in the upstream repository"), std::string::npos)
      << unknown.err;
}

}  // namespace
}  // namespace apexnpu::test
