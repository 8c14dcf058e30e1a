#pragma once
// One pack (.pack with its .idx), read in place: objects inflated and their delta chains
// resolved, with recently resolved bases kept (chains of tree versions share them).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "fs/mapped_file.h"
#include "git/pack_index.h"
#include "git/raw_object.h"

namespace apexnpu::git {

class PackFile {
 public:
  // `idx` names the index; the pack is the file beside it ending in .pack.
  explicit PackFile(const std::filesystem::path& idx);

  const PackIndex& index() const { return index_; }

  // The object at `offset`. A REF_DELTA's base may live elsewhere: `find_base` looks it up
  // (nullptr when the repository lacks it). Safe to call from several threads.
  using BaseLookup = std::function<SharedObject(const git_oid&)>;
  SharedObject read(std::uint64_t offset, const BaseLookup& find_base) const;

 private:
  SharedObject cached(std::uint64_t offset) const;
  void remember(std::uint64_t offset, const SharedObject& object) const;
  [[noreturn]] void fail(std::uint64_t offset, const std::string& why) const;

  std::filesystem::path path_;
  PackIndex index_;
  fs::MappedFile pack_;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::uint64_t, SharedObject> cache_;  // resolved delta bases
  mutable std::size_t cache_bytes_ = 0;
};

}  // namespace apexnpu::git
