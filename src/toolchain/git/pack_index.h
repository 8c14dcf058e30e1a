#pragma once
// A pack's index (.idx, version 2): which objects the pack holds and where each starts.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

#include "fs/mapped_file.h"
#include "git/object_id.h"

namespace apexnpu::git {

class PackIndex {
 public:
  // Throws Error naming the file when it is not a version-2 index or is cut short.
  explicit PackIndex(const std::filesystem::path& path);

  std::size_t size() const { return count_; }
  // Where the object starts in the pack; nullopt when the pack does not hold it.
  std::optional<std::uint64_t> find(const git_oid& id) const;
  // Appends to `out` every id that starts with `prefix` (hex digits).
  void find_prefix(std::string_view prefix, std::vector<git_oid>& out) const;

 private:
  const unsigned char* id_at(std::size_t i) const { return names_ + i * kIdSize; }
  std::uint64_t offset_at(std::size_t i) const;

  std::filesystem::path path_;
  fs::MappedFile file_;
  const unsigned char* fanout_ = nullptr;
  const unsigned char* names_ = nullptr;
  const unsigned char* offsets32_ = nullptr;
  const unsigned char* offsets64_ = nullptr;
  std::size_t count_ = 0;
  std::size_t large_offsets_ = 0;
};

}  // namespace apexnpu::git
