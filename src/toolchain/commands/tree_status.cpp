#include "commands/tree_status.h"

#include <mutex>
#include <unordered_map>

#include "fs/tree_io.h"
#include "git/blob_id.h"
#include "git/object_id.h"

namespace apexnpu::commands {

HashedTree read_hashed_tree(const std::filesystem::path& root, const std::vector<std::string>& excludes) {
  std::mutex mutex;
  std::unordered_map<const FileEntry*, git_oid> ids;  // the entries do not move once read
  HashedTree hashed;
  // apex/ may be a symlink to a directory (a volume): read through it, as build does.
  hashed.files = fs::read_tree(root, excludes,
                               [&](const std::string&, const FileEntry& entry) {
                                 const git_oid id = git::blob_id(entry.content);
                                 const std::lock_guard lock(mutex);
                                 ids.emplace(&entry, id);
                               },
                               {"apex"});
  hashed.ids.reserve(hashed.files.size());
  for (const auto& [path, entry] : hashed.files) hashed.ids.push_back(ids.at(&entry));
  return hashed;
}

TreeStatus compare_with_commit(const git::BlobListing& commit, const HashedTree& edited,
                               const std::vector<std::string>& excludes) {
  // Both sides are sorted by path the same way: one merge walk.
  TreeStatus status;
  auto up = commit.begin();
  auto file = edited.files.begin();
  auto id = edited.ids.begin();
  while (up != commit.end() || file != edited.files.end()) {
    if (file == edited.files.end() || (up != commit.end() && up->first < file->first)) {
      if (!fs::is_excluded(up->first, excludes)) status.deleted.push_back(up->first);
      ++up;
    } else if (up == commit.end() || file->first < up->first) {
      status.added.push_back(file->first);
      ++file, ++id;
    } else {
      if (file->second.kind != up->second.kind || !git::same_id(*id, up->second.id))
        status.changed.push_back(file->first);
      ++up, ++file, ++id;
    }
  }
  return status;
}

}  // namespace apexnpu::commands
