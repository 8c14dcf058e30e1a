#include "git/local_repository.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/io_threads.h"
#include "fs/file_io.h"
#include "git/listed_blobs.h"

namespace apexnpu::git {
namespace stdfs = std::filesystem;

namespace {

constexpr int kDeepestTagChain = 16;

// Settings under which the repository is not stored as this reader reads it (SHA-256 ids,
// reftable refs); `git config` keys are case-insensitive.
bool needs_libgit2(const stdfs::path& git_dir) {
  const auto config = try_read_file(git_dir / "config");
  if (!config) return false;
  std::string lower(*config);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("objectformat") != std::string::npos || lower.find("refstorage") != std::string::npos;
}

std::optional<stdfs::path> git_dir_of(const stdfs::path& path) {
  std::error_code ec;
  if (stdfs::is_directory(path / ".git", ec)) return path / ".git";
  if (stdfs::exists(path / ".git", ec)) return std::nullopt;  // a gitdir link: libgit2 follows it
  if (stdfs::is_regular_file(path / "HEAD", ec) && stdfs::is_directory(path / "objects", ec))
    return path;  // bare
  return std::nullopt;
}

// A tree's entries: "<octal mode> <name>\0<20-byte id>", one after another.
struct TreeEntry {
  unsigned mode;
  std::string_view name;
  git_oid id;
};

template <typename Visit>
void for_each_entry(const std::string& tree, const std::string& what, Visit visit) {
  const auto fail = [&] {
    throw Error(fmt::format("cannot read {}: not a valid tree", what),
                "the repository is damaged; fetch it again");
  };
  std::string_view rest = tree;
  while (!rest.empty()) {
    TreeEntry entry{0, {}, {}};
    std::size_t i = 0;
    for (; i < rest.size() && rest[i] >= '0' && rest[i] <= '7' && i < 7; ++i)
      entry.mode = entry.mode * 8 + static_cast<unsigned>(rest[i] - '0');
    if (i == 0 || i >= rest.size() || rest[i] != ' ') fail();
    const std::size_t nul = rest.find('\0', i + 1);
    if (nul == std::string_view::npos || rest.size() - nul - 1 < kIdSize) fail();
    entry.name = rest.substr(i + 1, nul - i - 1);
    if (entry.name.empty() || entry.name == "." || entry.name == ".." ||
        entry.name.find('/') != std::string_view::npos)
      fail();
    std::memcpy(entry.id.id, rest.data() + nul + 1, kIdSize);
    rest.remove_prefix(nul + 1 + kIdSize);
    visit(entry);
  }
}

// Entry modes as libgit2 normalises them: any execute bit makes an executable file.
enum class EntryKind { tree, gitlink, file };
EntryKind kind_of(unsigned mode, FileKind& file) {
  const unsigned type = mode & 0170000;
  if (type == 0040000) return EntryKind::tree;
  if ((mode & 0100) != 0) {
    file = FileKind::executable;
    return EntryKind::file;
  }
  if (type == 0160000) return EntryKind::gitlink;
  file = type == 0120000 ? FileKind::symlink : FileKind::regular;
  return EntryKind::file;
}

}  // namespace

LocalRepository::LocalRepository(const stdfs::path& git_dir)
    : objects_(git_dir / "objects"), refs_(git_dir) {}

std::unique_ptr<LocalRepository> LocalRepository::open(const stdfs::path& path) {
  const auto git_dir = git_dir_of(path);
  std::error_code ec;
  if (!git_dir || stdfs::exists(*git_dir / "commondir", ec) || needs_libgit2(*git_dir))
    return nullptr;
  return std::unique_ptr<LocalRepository>(new LocalRepository(*git_dir));
}

SharedObject LocalRepository::read(const git_oid& id, ObjectType type, const std::string& what) const {
  SharedObject object = objects_.read(id);
  if (!object)
    throw Error(fmt::format("cannot read {}: the object {} is not in the repository", what, to_hex(id)),
                "the repository is incomplete; fetch it again");
  if (object->type != type)
    throw Error(fmt::format("cannot read {}: the object {} is not a {}", what, to_hex(id),
                            type == ObjectType::tree ? "tree" : type == ObjectType::blob ? "blob" : "commit"),
                "the repository is damaged; fetch it again");
  return object;
}

std::optional<git_oid> LocalRepository::resolve_commit(const std::string& ref) const {
  // rev-parse's order: a full id that exists, then refs, then an abbreviated id.
  std::optional<git_oid> id = parse_hex_id(ref);
  SharedObject object = id ? objects_.read(*id) : nullptr;
  if (!object) {
    id = refs_.dwim(ref);
    if (!id && is_hex_prefix(ref)) {
      const auto matches = objects_.find_prefix(ref);
      if (matches.size() == 1) id = matches.front();
    }
    if (!id || !(object = objects_.read(*id))) return std::nullopt;
  }
  for (int depth = 0; depth < kDeepestTagChain; ++depth) {
    if (object->type == ObjectType::commit) return id;
    if (object->type != ObjectType::tag || !object->data.starts_with("object ")) return std::nullopt;
    id = parse_hex_id(std::string_view(object->data).substr(7, kHexIdSize));
    if (!id || !(object = objects_.read(*id))) return std::nullopt;
  }
  return std::nullopt;
}

void LocalRepository::list_tree(const git_oid& tree, const std::string& prefix, BlobListing& blobs,
                                std::vector<std::string>& skipped_submodules) const {
  const std::string what = prefix.empty() ? "the root tree" : fmt::format("the tree {}", prefix);
  const SharedObject object = read(tree, ObjectType::tree, what);
  for_each_entry(object->data, what, [&](const TreeEntry& entry) {
    std::string path = prefix + std::string(entry.name);
    FileKind file = FileKind::regular;
    switch (kind_of(entry.mode, file)) {
      case EntryKind::tree:
        list_tree(entry.id, path + '/', blobs, skipped_submodules);
        break;
      case EntryKind::gitlink:
        skipped_submodules.push_back(std::move(path));
        break;
      case EntryKind::file:
        blobs.emplace(std::move(path), BlobRef{entry.id, file});
        break;
    }
  });
}

BlobListing LocalRepository::list_commit_blobs(const git_oid& commit,
                                               std::vector<std::string>& skipped_submodules) const {
  const SharedObject object = read(commit, ObjectType::commit, fmt::format("the commit {}", to_hex(commit)));
  const auto tree = object->data.starts_with("tree ")
                        ? parse_hex_id(std::string_view(object->data).substr(5, kHexIdSize))
                        : std::nullopt;
  if (!tree)
    throw Error(fmt::format("cannot read the commit {}: it names no tree", to_hex(commit)),
                "the repository is damaged; fetch it again");
  BlobListing blobs;
  list_tree(*tree, "", blobs, skipped_submodules);
  return blobs;
}

FileEntry LocalRepository::read_blob(const std::string& path, const BlobRef& ref) const {
  return {read(ref.id, ObjectType::blob, path)->data, ref.kind};
}

FileTree LocalRepository::read_commit_tree(const git_oid& commit,
                                           std::vector<std::string>& skipped_submodules) const {
  return read_listed_blobs(list_commit_blobs(commit, skipped_submodules), io_threads(), [this] {
    return [this](const std::string& path, const BlobRef& ref) { return read_blob(path, ref); };
  });
}

}  // namespace apexnpu::git
