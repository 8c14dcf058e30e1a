#pragma once
// A pack and its index checked before libgit2 reads them. libgit2 1.5.1 maps whatever offset an
// index gives (one past the pack's end crashes it) and follows ref-deltas without noticing that
// a chain returns to itself (it loops for ever). The index is checked whole when the pack is
// opened; each object's delta chain when it is about to be read.
#include <git2/oid.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "fs/mapped_file.h"

namespace apexnpu::git {

class CheckedPack {
 public:
  // Opens <name>.idx and <name>.pack; throws Error naming the index when it is not a version-2
  // index whose every offset lies inside its pack.
  explicit CheckedPack(const std::filesystem::path& index);
  CheckedPack(const CheckedPack&) = delete;
  CheckedPack& operator=(const CheckedPack&) = delete;

  const std::filesystem::path& index_path() const { return index_path_; }

  // Where `id` starts in the pack, or nullopt when the pack does not hold it.
  std::optional<std::uint64_t> find(const git_oid& id) const;

  // Why the object at `offset` cannot be read to its end: a delta chain that returns to an entry
  // it passed, or one longer than git ever writes. Nothing when the chain reaches a whole object
  // (or an entry libgit2 refuses cleanly by itself).
  std::optional<std::string> delta_chain_damage(std::uint64_t offset) const;

 private:
  std::uint64_t offset_at(std::size_t i) const;
  void check_index();
  std::string pack_path_string() const;

  std::filesystem::path index_path_;
  fs::MappedFile index_;
  fs::MappedFile pack_;
  std::size_t count_ = 0;
  std::size_t large_offsets_ = 0;
};

}  // namespace apexnpu::git
