#include "wheel/member_names.h"

#include <fmt/core.h>

#include <algorithm>

#include "core/error.h"
#include "core/text_bytes.h"

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

std::string printable_name(std::string_view name) {
  const bool utf8 = is_valid_utf8(name);
  std::string_view s = name;
  if (s.size() > kShownBytes) {  // cut on a character boundary
    std::size_t cut = kShownBytes;
    while (cut > 0 && is_utf8_continuation(s[cut])) --cut;
    s = s.substr(0, cut);
  }
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    out += (is_control_byte(c) || (u >= 0x80 && !utf8)) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  if (s.size() < name.size()) out += fmt::format("... ({} bytes)", name.size());
  return out;
}

std::optional<std::string> member_name_problem(std::string_view name) {
  if (!is_valid_utf8(name)) return "is not valid UTF-8 (installers decode names as UTF-8)";
  if (std::any_of(name.begin(), name.end(), is_control_byte))
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
