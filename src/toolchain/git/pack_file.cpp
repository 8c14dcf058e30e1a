#include "git/pack_file.h"

#include <fmt/core.h>

#include <cstring>
#include <vector>

#include "core/error.h"
#include "git/delta.h"
#include "git/zlib_inflate.h"

namespace apexnpu::git {

namespace {

constexpr int kOfsDelta = 6, kRefDelta = 7;
constexpr std::size_t kHeader = 12;
constexpr std::size_t kLongestChain = 10000;  // git writes at most 4095
constexpr std::size_t kCacheBytes = 32u << 20;
constexpr std::size_t kLargestCached = 4u << 20;

std::filesystem::path pack_beside(const std::filesystem::path& idx) {
  std::filesystem::path pack = idx;
  return pack.replace_extension(".pack");
}

// One entry's header: its type, inflated size and where its zlib data starts; for deltas,
// where the base is.
struct Entry {
  int type = 0;
  std::uint64_t size = 0;
  std::uint64_t data = 0;         // offset of the zlib stream
  std::uint64_t base_offset = 0;  // OFS_DELTA
  git_oid base_id{};              // REF_DELTA
};

}  // namespace

PackFile::PackFile(const std::filesystem::path& idx)
    : path_(pack_beside(idx)), index_(idx), pack_(path_) {
  const unsigned char* data = pack_.data();
  if (pack_.size() < kHeader + kIdSize || std::memcmp(data, "PACK", 4) != 0 ||
      (data[7] != 2 && data[7] != 3) || data[4] != 0 || data[5] != 0 || data[6] != 0)
    fail(0, "not a version-2 or -3 pack");
}

void PackFile::fail(std::uint64_t offset, const std::string& why) const {
  throw Error(fmt::format("cannot read the pack {} at offset {}: {}", path_.string(), offset, why),
              "the repository is damaged; fetch it again");
}

SharedObject PackFile::cached(std::uint64_t offset) const {
  const std::lock_guard lock(cache_mutex_);
  const auto it = cache_.find(offset);
  return it == cache_.end() ? nullptr : it->second;
}

void PackFile::remember(std::uint64_t offset, const SharedObject& object) const {
  if (object->data.size() > kLargestCached) return;
  const std::lock_guard lock(cache_mutex_);
  if (cache_bytes_ + object->data.size() > kCacheBytes) {  // crude, but chains are short-lived
    cache_.clear();
    cache_bytes_ = 0;
  }
  if (cache_.emplace(offset, object).second) cache_bytes_ += object->data.size();
}

SharedObject PackFile::read(std::uint64_t offset, const BaseLookup& find_base) const {
  const unsigned char* data = pack_.data();
  const std::uint64_t end = pack_.size() - kIdSize;  // the trailing checksum
  const auto parse = [&](std::uint64_t at) {
    if (at < kHeader || at >= end) fail(at, "an object offset outside the pack");
    Entry e;
    std::uint64_t p = at;
    unsigned char c = data[p++];
    e.type = (c >> 4) & 7;
    e.size = c & 15;
    for (unsigned shift = 4; c & 0x80; shift += 7) {
      if (p >= end || shift > 57) fail(at, "an object header cut short");
      c = data[p++];
      e.size |= std::uint64_t{c & 0x7fu} << shift;
    }
    if (e.type == kOfsDelta) {
      if (p >= end) fail(at, "a delta header cut short");
      c = data[p++];
      std::uint64_t back = c & 0x7f;
      while (c & 0x80) {
        if (p >= end || back > (UINT64_MAX >> 8)) fail(at, "a delta header cut short");
        c = data[p++];
        back = ((back + 1) << 7) | (c & 0x7f);
      }
      if (back == 0 || back > at) fail(at, "a delta whose base is not before it");
      e.base_offset = at - back;
    } else if (e.type == kRefDelta) {
      if (end - p < kIdSize) fail(at, "a delta header cut short");
      std::memcpy(e.base_id.id, data + p, kIdSize);
      p += kIdSize;
    } else if (e.type < 1 || e.type > 4) {
      fail(at, fmt::format("an object of unknown type {}", e.type));
    }
    e.data = p;
    return e;
  };
  const auto inflate = [&](std::uint64_t at, const Entry& e) {
    return inflate_exact(data + e.data, end - e.data, e.size,
                         fmt::format("the object at offset {} of {}", at, path_.string()));
  };

  // Walk to the chain's base (a whole object, a cached one, or one found elsewhere), then apply
  // the deltas from the innermost out, keeping each base for the chains that share it.
  std::vector<std::pair<std::uint64_t, Entry>> chain;
  SharedObject base;
  std::optional<std::uint64_t> base_at;
  for (std::uint64_t at = offset;;) {
    if ((base = cached(at))) {
      base_at = at;
      break;
    }
    const Entry e = parse(at);
    if (e.type != kOfsDelta && e.type != kRefDelta) {
      base = std::make_shared<const RawObject>(RawObject{static_cast<ObjectType>(e.type), inflate(at, e)});
      base_at = at;
      break;
    }
    chain.emplace_back(at, e);
    if (chain.size() > kLongestChain) fail(offset, "a delta chain too long (or a loop)");
    if (e.type == kOfsDelta) {
      at = e.base_offset;
    } else if (const auto local = index_.find(e.base_id)) {
      at = *local;
    } else {
      base = find_base(e.base_id);
      if (!base) fail(at, fmt::format("the delta base {} is not in the repository", to_hex(e.base_id)));
      break;
    }
  }
  for (std::size_t i = chain.size(); i-- > 0;) {
    if (base_at) remember(*base_at, base);
    const auto& [at, e] = chain[i];
    base = std::make_shared<const RawObject>(RawObject{
        base->type, apply_delta(base->data, inflate(at, e),
                                fmt::format("the object at offset {} of {}", at, path_.string()))});
    base_at = at;
  }
  return base;
}

}  // namespace apexnpu::git
