#include "wheel/member_names.h"

#include <fmt/core.h>

#include "core/error.h"

namespace apexnpu::wheel {
namespace {

// The case-insensitive file systems (APFS, NTFS) fold far more than ASCII; ASCII is what wheel
// names hold in practice, and folding it alone never merges names that differ otherwise.
std::string fold_case(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

constexpr std::size_t kShownBytes = 120;  // of a long name, in messages

}  // namespace

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4, cp = c & 0x07;
    } else {
      return false;  // a continuation byte first, an overlong 0xc0/0xc1, or beyond U+10FFFF
    }
    if (s.size() - i < len) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += len;
  }
  return true;
}

std::string printable_name(std::string_view name) {
  const bool utf8 = is_valid_utf8(name);
  std::string_view s = name;
  if (s.size() > kShownBytes) {  // cut on a character boundary
    std::size_t cut = kShownBytes;
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
    s = s.substr(0, cut);
  }
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f || (u >= 0x80 && !utf8)) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  if (s.size() < name.size()) out += fmt::format("... ({} bytes)", name.size());
  return out;
}

std::optional<std::string> member_name_problem(std::string_view name) {
  if (!is_valid_utf8(name)) return "is not valid UTF-8 (installers decode names as UTF-8)";
  for (char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return "holds a control character (NUL, newline, ...)";
  if (name.size() > kMaxNameBytes)
    return fmt::format("is {} bytes long (at most {} allowed)", name.size(), kMaxNameBytes);
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    if (slash - start > kMaxComponentBytes)
      return fmt::format("has a part of {} bytes (at most {} allowed)", slash - start, kMaxComponentBytes);
    start = slash + 1;
  }
  return std::nullopt;
}

void check_member_names(const std::vector<std::string>& names, const std::string& source) {
  MemberNames seen;
  for (const std::string& name : names) {
    auto problem = member_name_problem(name);
    if (!problem) problem = seen.add(name);
    if (problem)
      throw Error(fmt::format("{}: {}: the name {}", source, printable_name(name), *problem),
                  "rename the file: pip installs a wheel only when every name in it is valid "
                  "UTF-8, short enough, and unique even where case does not count");
  }
}

std::optional<std::string> MemberNames::add(const std::string& name) {
  const std::string folded = fold_case(name);
  if (const auto it = files_.find(folded); it != files_.end())
    return it->second == name ? "appears twice"
                              : fmt::format("differs from {} only by case", printable_name(it->second));
  if (const auto it = directories_.find(folded); it != directories_.end())
    return fmt::format("is a file, and {}/ a directory", printable_name(it->second));
  for (std::size_t slash = folded.find('/'); slash != std::string::npos;
       slash = folded.find('/', slash + 1)) {
    if (auto clash = add_directory(name.substr(0, slash))) return "has a directory that " + *clash;
  }
  files_.emplace(folded, name);
  return std::nullopt;
}

std::optional<std::string> MemberNames::add_directory(const std::string& dir) {
  const std::string folded = fold_case(dir);
  if (const auto it = files_.find(folded); it != files_.end())
    return fmt::format("is {}, a file", printable_name(it->second));
  // One directory on macOS and Windows, two on Linux: the files would land apart.
  const auto [it, added] = directories_.emplace(folded, dir);
  if (!added && it->second != dir)
    return fmt::format("differs from {}/ only by case", printable_name(it->second));
  return std::nullopt;
}

}  // namespace apexnpu::wheel
