#pragma once
// Object ids in hex, without libgit2: the native reader parses and prints them itself.
#include <git2/oid.h>

#include <optional>
#include <string>
#include <string_view>

namespace apexnpu::git {

inline constexpr std::size_t kIdSize = 20;      // SHA-1 bytes
inline constexpr std::size_t kHexIdSize = 40;

std::string to_hex(const git_oid& id);

// The id written as 40 lowercase or uppercase hex digits; nullopt for anything else.
std::optional<git_oid> parse_hex_id(std::string_view hex);

// Whether `text` is 4 to 40 hex digits: what git takes as a (possibly abbreviated) id.
bool is_hex_prefix(std::string_view text);

// Whether the id's hex form starts with `prefix` (hex digits, either case).
bool id_starts_with(const git_oid& id, std::string_view prefix);

inline bool same_id(const git_oid& a, const git_oid& b) {
  return std::string_view(reinterpret_cast<const char*>(a.id), kIdSize) ==
         std::string_view(reinterpret_cast<const char*>(b.id), kIdSize);
}

}  // namespace apexnpu::git
