#include "git/object_store.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <system_error>

#include "core/error.h"
#include "fs/file_io.h"
#include "git/zlib_inflate.h"

namespace apexnpu::git {
namespace stdfs = std::filesystem;

namespace {

constexpr int kDeepestAlternate = 5;  // as git

std::optional<ObjectType> type_named(std::string_view name) {
  if (name == "commit") return ObjectType::commit;
  if (name == "tree") return ObjectType::tree;
  if (name == "blob") return ObjectType::blob;
  if (name == "tag") return ObjectType::tag;
  return std::nullopt;
}

// The loose object's "<type> <size>\0<bytes>", checked.
SharedObject parse_loose(std::string inflated, const std::string& what) {
  const auto fail = [&] {
    throw Error(fmt::format("cannot read {}: not a git object", what),
                "the repository is damaged; fetch it again");
  };
  const std::size_t space = inflated.find(' ');
  const std::size_t nul = inflated.find('\0');
  if (space == std::string::npos || nul == std::string::npos || space > nul) fail();
  const auto type = type_named(std::string_view(inflated).substr(0, space));
  std::size_t size = 0;
  const char* digits = inflated.data() + space + 1;
  const auto [end, ec] = std::from_chars(digits, inflated.data() + nul, size);
  if (!type || ec != std::errc() || end != inflated.data() + nul || inflated.size() - nul - 1 != size)
    fail();
  inflated.erase(0, nul + 1);
  return std::make_shared<const RawObject>(RawObject{*type, std::move(inflated)});
}

}  // namespace

ObjectStore::ObjectStore(const stdfs::path& objects) : ObjectStore(objects, 0) {}

ObjectStore::ObjectStore(const stdfs::path& objects, int depth) : objects_(objects) {
  std::error_code ec;
  std::vector<stdfs::path> indexes;
  for (stdfs::directory_iterator it(objects / "pack", ec), end; !ec && it != end; it.increment(ec)) {
    stdfs::path pack = it->path();
    if (it->path().extension() == ".idx" && stdfs::exists(pack.replace_extension(".pack"), ec))
      indexes.push_back(it->path());
  }
  std::sort(indexes.begin(), indexes.end());  // a fixed order, whatever the directory's
  for (const auto& idx : indexes) packs_.push_back(std::make_unique<PackFile>(idx));

  if (depth >= kDeepestAlternate) return;
  const auto alternates = try_read_file(objects / "info" / "alternates");
  if (!alternates) return;
  std::string_view rest = *alternates;
  while (!rest.empty()) {
    const std::size_t eol = std::min(rest.find('\n'), rest.size());
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(std::min(eol + 1, rest.size()));
    if (line.empty() || line.front() == '#') continue;
    const stdfs::path path = stdfs::path(line).is_absolute() ? stdfs::path(line) : objects / line;
    if (stdfs::is_directory(path, ec))
      alternates_.push_back(std::unique_ptr<ObjectStore>(new ObjectStore(path, depth + 1)));
  }
}

SharedObject ObjectStore::read_loose(const git_oid& id) const {
  const std::string hex = to_hex(id);
  const stdfs::path path = objects_ / hex.substr(0, 2) / hex.substr(2);
  const auto compressed = try_read_file(path);
  if (!compressed) return nullptr;
  const std::string what = fmt::format("the loose object {}", path.string());
  return parse_loose(
      inflate_all(reinterpret_cast<const unsigned char*>(compressed->data()), compressed->size(), what),
      what);
}

SharedObject ObjectStore::read(const git_oid& id) const {
  const PackFile::BaseLookup find_base = [this](const git_oid& base) { return read(base); };
  for (const auto& pack : packs_)
    if (const auto offset = pack->index().find(id)) return pack->read(*offset, find_base);
  if (SharedObject loose = read_loose(id)) return loose;
  for (const auto& alternate : alternates_)
    if (SharedObject object = alternate->read(id)) return object;
  return nullptr;
}

std::vector<git_oid> ObjectStore::find_prefix(std::string_view prefix) const {
  std::vector<git_oid> found;
  if (!is_hex_prefix(prefix)) return found;
  for (const auto& pack : packs_) pack->index().find_prefix(prefix, found);
  std::string lower(prefix);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) { return c | 0x20; });
  std::error_code ec;
  for (stdfs::directory_iterator it(objects_ / lower.substr(0, 2), ec), end; !ec && it != end;
       it.increment(ec)) {
    if (const auto id = parse_hex_id(lower.substr(0, 2) + it->path().filename().string());
        id && id_starts_with(*id, lower))
      found.push_back(*id);
  }
  for (const auto& alternate : alternates_) {
    const auto more = alternate->find_prefix(prefix);
    found.insert(found.end(), more.begin(), more.end());
  }
  std::sort(found.begin(), found.end(),
            [](const git_oid& a, const git_oid& b) { return std::memcmp(a.id, b.id, kIdSize) < 0; });
  found.erase(std::unique(found.begin(), found.end(), same_id), found.end());
  return found;
}

}  // namespace apexnpu::git
