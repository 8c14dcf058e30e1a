#include "git/pack_index.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace apexnpu::git {

namespace {

constexpr unsigned char kMagic[4] = {0xff, 't', 'O', 'c'};
constexpr std::size_t kHeader = 8, kFanout = 256 * 4;

std::uint32_t be32(const unsigned char* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

std::uint64_t be64(const unsigned char* p) {
  return std::uint64_t{be32(p)} << 32 | be32(p + 4);
}

// The fanout buckets (first bytes) that ids starting with the hex `prefix` fall in.
std::pair<unsigned, unsigned> first_byte_range(std::string_view prefix) {
  const auto nibble = [](char c) -> unsigned { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  const unsigned high = nibble(prefix[0]);
  if (prefix.size() == 1) return {high << 4, (high << 4) | 15};
  const unsigned byte = high << 4 | nibble(prefix[1]);
  return {byte, byte};
}

}  // namespace

PackIndex::PackIndex(const std::filesystem::path& path) : path_(path), file_(path) {
  const unsigned char* data = file_.data();
  const std::size_t size = file_.size();
  const auto fail = [&](const char* why) {
    throw Error(fmt::format("cannot read the pack index {}: {}", path_.string(), why),
                "the repository is damaged; fetch it again");
  };
  if (size < kHeader + kFanout || std::memcmp(data, kMagic, 4) != 0 || be32(data + 4) != 2)
    fail("not a version-2 pack index");
  fanout_ = data + kHeader;
  count_ = be32(fanout_ + 255 * 4);
  // ids, CRCs, 32-bit offsets, then the 64-bit offsets and two trailing checksums
  const std::size_t fixed = kHeader + kFanout + count_ * (kIdSize + 4 + 4) + 2 * kIdSize;
  if (size < fixed) fail("cut short");
  names_ = fanout_ + kFanout;
  offsets32_ = names_ + count_ * (kIdSize + 4);
  offsets64_ = offsets32_ + count_ * 4;
  large_offsets_ = (size - fixed) / 8;
  for (unsigned b = 1; b < 256; ++b)
    if (be32(fanout_ + 4 * (b - 1)) > be32(fanout_ + 4 * b)) fail("its fanout table goes backwards");
}

std::uint64_t PackIndex::offset_at(std::size_t i) const {
  const std::uint32_t small = be32(offsets32_ + 4 * i);
  if ((small & 0x80000000u) == 0) return small;
  const std::size_t large = small & 0x7fffffffu;
  if (large >= large_offsets_)
    throw Error(fmt::format("cannot read the pack index {}: an offset points past its table",
                            path_.string()),
                "the repository is damaged; fetch it again");
  return be64(offsets64_ + 8 * large);
}

std::optional<std::uint64_t> PackIndex::find(const git_oid& id) const {
  const unsigned first = id.id[0];
  std::size_t lo = first == 0 ? 0 : be32(fanout_ + 4 * (first - 1));
  std::size_t hi = be32(fanout_ + 4 * first);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const int order = std::memcmp(id_at(mid), id.id, kIdSize);
    if (order == 0) return offset_at(mid);
    if (order < 0) lo = mid + 1;
    else hi = mid;
  }
  return std::nullopt;
}

void PackIndex::find_prefix(std::string_view prefix, std::vector<git_oid>& out) const {
  if (prefix.empty()) return;
  const auto [first, last] = first_byte_range(prefix);
  const std::size_t lo = first == 0 ? 0 : be32(fanout_ + 4 * (first - 1));
  const std::size_t hi = be32(fanout_ + 4 * last);
  for (std::size_t i = lo; i < hi && i < count_; ++i) {
    git_oid id;
    std::memcpy(id.id, id_at(i), kIdSize);
    if (id_starts_with(id, prefix)) out.push_back(id);
  }
}

}  // namespace apexnpu::git
