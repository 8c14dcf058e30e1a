#pragma once
// Packs written by the tests byte by byte (version-2 .pack and .idx), so a test can make what
// git never writes: ref-deltas that are each other's base, offsets past the end. libgit2
// compares the pack's trailing checksum with the one the index records but does not recompute
// either, so both carry the same fixed bytes.
#include <git2.h>

#include <filesystem>
#include <string>
#include <vector>

namespace apexnpu::test {

struct PackEntry {
  git_oid id;        // what the index lists it as
  int type;          // 1 commit, 2 tree, 3 blob, 4 tag, 7 ref-delta
  std::string data;  // the object's bytes, or the delta's
  git_oid base{};    // a ref-delta's base
};

// The id git gives `data` as an object of `type` (1 commit, 2 tree, 3 blob).
git_oid object_id(int type, const std::string& data);

// A delta that turns any base of `base_size` bytes into `result` (inserts only).
std::string insert_delta(std::size_t base_size, const std::string& result);

// Writes a loose object file (zlib of "<type> <size>\0" and the data) under objects_dir and
// returns its id.
git_oid write_loose(const std::filesystem::path& objects_dir, int type, const std::string& data);
std::filesystem::path loose_path(const std::filesystem::path& objects_dir, const git_oid& id);
std::string zlib(const std::string& bytes);

// Writes <objects_dir>/pack/pack-<name>.pack and .idx; returns the .idx path.
std::filesystem::path write_pack(const std::filesystem::path& objects_dir, const std::string& name,
                                 const std::vector<PackEntry>& entries);

// The 4-byte offsets table of a version-2 index: where entry i's offset is (entries sorted by id).
std::size_t index_offset_position(const std::filesystem::path& index, std::size_t i);

}  // namespace apexnpu::test
