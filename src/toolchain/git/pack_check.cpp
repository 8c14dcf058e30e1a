#include "git/pack_check.h"

#include <fmt/core.h>

#include <cstring>
#include <unordered_set>

#include "core/error.h"

namespace apexnpu::git {

namespace {

constexpr unsigned char kIndexMagic[4] = {0xff, 't', 'O', 'c'};
constexpr std::size_t kIdSize = 20;
constexpr std::size_t kHeader = 8, kFanout = 256 * 4;
constexpr std::size_t kPackHeader = 12;  // "PACK", version, count
// git caps a delta chain at 4095 entries (pack.depth); anything longer is damage.
constexpr std::size_t kLongestChain = 4096;

enum PackType : unsigned { kOfsDelta = 6, kRefDelta = 7 };

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

}  // namespace

CheckedPack::CheckedPack(const std::filesystem::path& index)
    : index_path_(index), index_(index), pack_(std::filesystem::path(index).replace_extension(".pack")) {
  check_index();
}

void CheckedPack::check_index() {
  const unsigned char* data = index_.data();
  const std::size_t size = index_.size();
  const auto damaged = [&](const std::string& why) {
    return Error(fmt::format("the pack index {} is damaged: {}", index_path_.string(), why),
                 "the repository is damaged: fetch or clone it again (git fsck names what else is)");
  };
  if (size < kHeader + kFanout || std::memcmp(data, kIndexMagic, 4) != 0 || be32(data + 4) != 2)
    throw damaged("it is not a version-2 pack index");
  const unsigned char* fanout = data + kHeader;
  for (unsigned b = 1; b < 256; ++b)
    if (be32(fanout + 4 * (b - 1)) > be32(fanout + 4 * b)) throw damaged("its fanout table goes backwards");
  const std::size_t count = be32(fanout + 255 * 4);
  // ids, CRCs and 32-bit offsets; then 64-bit offsets; then the pack's and the index's checksums
  const std::size_t fixed = kHeader + kFanout + count * (kIdSize + 4 + 4) + 2 * kIdSize;
  if (size < fixed || (size - fixed) % 8 != 0)
    throw damaged(fmt::format("its size ({} bytes) does not fit {} objects", size, count));
  count_ = count;
  large_offsets_ = (size - fixed) / 8;
  if (pack_.size() < kPackHeader + kIdSize || std::memcmp(pack_.data(), "PACK", 4) != 0)
    throw damaged(fmt::format("its pack {} is not a pack", pack_path_string()));
  // The index records the checksum that ends its pack (just before its own). A pack cut short
  // or changed at its end no longer ends with it; libgit2 then drops the pack and every object
  // in it reads as missing, which would make a damaged repository look like an unknown ref.
  if (std::memcmp(pack_.data() + pack_.size() - kIdSize, data + size - 2 * kIdSize, kIdSize) != 0)
    throw damaged(
        fmt::format("its pack {} ({} bytes) does not end with the checksum the index "
                    "records for it: the pack was cut short or changed",
                    pack_path_string(), pack_.size()));
  // An entry is at least one header byte, and the pack ends with a 20-byte checksum.
  const std::uint64_t end = pack_.size() - kIdSize;
  for (std::size_t i = 0; i < count; ++i) {
    const unsigned char* small = data + kHeader + kFanout + count * (kIdSize + 4) + 4 * i;
    if ((be32(small) & 0x80000000u) != 0 && (be32(small) & 0x7fffffffu) >= large_offsets_)
      throw damaged(fmt::format("object {}'s offset points past its table of large offsets", i));
    const std::uint64_t offset = offset_at(i);
    if (offset < kPackHeader || offset >= end)
      throw damaged(
          fmt::format("object {} is at offset {}, outside its pack ({} bytes)", i, offset, pack_.size()));
  }
}

std::string CheckedPack::pack_path_string() const {
  return std::filesystem::path(index_path_).replace_extension(".pack").string();
}

std::uint64_t CheckedPack::offset_at(std::size_t i) const {
  const unsigned char* offsets = index_.data() + kHeader + kFanout + count_ * (kIdSize + 4);
  const std::uint32_t small = be32(offsets + 4 * i);
  if ((small & 0x80000000u) == 0) return small;
  const unsigned char* large = offsets + 4 * count_ + 8 * (small & 0x7fffffffu);
  return std::uint64_t{be32(large)} << 32 | be32(large + 4);
}

std::optional<std::uint64_t> CheckedPack::find(const git_oid& id) const {
  const unsigned char* fanout = index_.data() + kHeader;
  const unsigned char* ids = fanout + kFanout;
  const unsigned first = id.id[0];
  std::size_t lo = first == 0 ? 0 : be32(fanout + 4 * (first - 1));
  std::size_t hi = be32(fanout + 4 * first);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const int order = std::memcmp(ids + kIdSize * mid, id.id, kIdSize);
    if (order == 0) return offset_at(mid);
    if (order < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return std::nullopt;
}

std::optional<std::string> CheckedPack::delta_chain_damage(std::uint64_t offset) const {
  const unsigned char* pack = pack_.data();
  const std::uint64_t end = pack_.size() - kIdSize;
  std::unordered_set<std::uint64_t> passed;
  for (std::size_t step = 0; step < kLongestChain; ++step) {
    if (!passed.insert(offset).second)
      return fmt::format("its delta chain returns to the entry at offset {}", offset);
    // The entry header: type in bits 4-6 of the first byte, then the size's varint.
    std::uint64_t at = offset;
    if (at >= end) return std::nullopt;  // libgit2 refuses an entry past the end by itself
    const unsigned type = (pack[at] >> 4) & 7;
    while (at < end && (pack[at] & 0x80) != 0) ++at;
    ++at;
    if (type == kOfsDelta) {
      // The distance back to the base: big-endian base-128, each continuation adding one.
      std::uint64_t distance = 0;
      for (unsigned bytes = 0;; ++at, ++bytes) {
        if (at >= end || bytes > 9) return std::nullopt;  // refused by libgit2 too
        distance = distance << 7 | (pack[at] & 0x7f);
        if ((pack[at] & 0x80) == 0) break;
        ++distance;
      }
      if (distance == 0 || distance > offset) return std::nullopt;
      offset -= distance;
    } else if (type == kRefDelta) {
      if (end - at < kIdSize) return std::nullopt;
      git_oid base;
      std::memcpy(base.id, pack + at, kIdSize);
      const std::optional<std::uint64_t> base_offset = find(base);
      if (!base_offset) return std::nullopt;  // libgit2: "base entry delta is not in the same pack"
      offset = *base_offset;
    } else {
      return std::nullopt;  // a whole object, or a type libgit2 refuses
    }
  }
  return fmt::format("its delta chain is longer than the {} entries git ever writes", kLongestChain);
}

}  // namespace apexnpu::git
