#include "git/object_id.h"

#include "core/hex.h"

namespace apexnpu::git {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string to_hex(const git_oid& id) { return apexnpu::to_hex(std::span<const std::uint8_t>(id.id, kIdSize)); }

std::optional<git_oid> parse_hex_id(std::string_view hex) {
  if (hex.size() != kHexIdSize) return std::nullopt;
  git_oid id{};
  for (std::size_t i = 0; i < kIdSize; ++i) {
    const int high = hex_value(hex[2 * i]), low = hex_value(hex[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    id.id[i] = static_cast<unsigned char>(high << 4 | low);
  }
  return id;
}

bool is_hex_prefix(std::string_view text) {
  if (text.size() < 4 || text.size() > kHexIdSize) return false;
  for (char c : text)
    if (hex_value(c) < 0) return false;
  return true;
}

bool id_starts_with(const git_oid& id, std::string_view prefix) {
  for (std::size_t i = 0; i < prefix.size() && i < kHexIdSize; ++i) {
    const int nibble = i % 2 == 0 ? id.id[i / 2] >> 4 : id.id[i / 2] & 15;
    if (hex_value(prefix[i]) != nibble) return false;
  }
  return prefix.size() <= kHexIdSize;
}

}  // namespace apexnpu::git
