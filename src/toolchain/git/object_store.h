#pragma once
// A repository's objects, read without libgit2: its packs, its loose objects and those of its
// alternates (objects/info/alternates). Read-only and safe to share between threads.
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "git/pack_file.h"
#include "git/raw_object.h"

namespace apexnpu::git {

class ObjectStore {
 public:
  // `objects` is the repository's objects directory. Throws Error when a pack cannot be read.
  explicit ObjectStore(const std::filesystem::path& objects);

  // The object, or nullptr when no pack, loose object or alternate holds it.
  SharedObject read(const git_oid& id) const;

  // Every id that starts with `prefix` (4 to 40 hex digits), each once.
  std::vector<git_oid> find_prefix(std::string_view prefix) const;

 private:
  ObjectStore(const std::filesystem::path& objects, int depth);
  SharedObject read_loose(const git_oid& id) const;

  std::filesystem::path objects_;
  std::vector<std::unique_ptr<PackFile>> packs_;
  std::vector<std::unique_ptr<ObjectStore>> alternates_;
};

}  // namespace apexnpu::git
