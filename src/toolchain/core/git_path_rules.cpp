#include "core/git_path_rules.h"

#include <fmt/core.h>

#include <cstdint>

#include "core/text_bytes.h"

namespace apexnpu {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `rest` is empty or only dots and spaces, which NTFS drops from the end of a name; an
// NTFS stream suffix (":name") is the same file too.
bool ntfs_ignores(std::string_view rest) {
  for (const char c : rest) {
    if (c == ':') return true;
    if (c != '.' && c != ' ') return false;
  }
  return true;
}

// Whether `name` starts with `word` (lower case ASCII) in any case.
bool starts_with_any_case(std::string_view name, std::string_view word) {
  if (name.size() < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i)
    if (lower(name[i]) != word[i]) return false;
  return true;
}

// NTFS's name for `name`: `word` in any case, or an 8.3 short name "<prefix>~<digit>" with the
// digit in [1, last], then only what NTFS ignores.
bool ntfs_reads_as(std::string_view name, std::string_view word, std::string_view short_prefix,
                   char last_digit) {
  if (starts_with_any_case(name, word)) return ntfs_ignores(name.substr(word.size()));
  const std::size_t n = short_prefix.size();
  if (!starts_with_any_case(name, short_prefix) || name.size() < n + 2) return false;
  return name[n] == '~' && name[n + 1] >= '1' && name[n + 1] <= last_digit &&
         ntfs_ignores(name.substr(n + 2));
}

// The code points HFS+ leaves out when it compares names (zero-width joiners, direction marks,
// the byte-order mark, ...).
bool hfs_ignores(std::uint32_t code_point) {
  return (code_point >= 0x200c && code_point <= 0x200f) || (code_point >= 0x202a && code_point <= 0x202e) ||
         (code_point >= 0x206a && code_point <= 0x206f) || code_point == 0xfeff;
}

// Whether HFS+ reads `name` as `word` (lower case ASCII): ignorable code points dropped, ASCII
// compared in any case. A byte that is not valid UTF-8 makes it another name.
bool hfs_reads_as(std::string_view name, std::string_view word) {
  std::size_t matched = 0;
  for (std::size_t i = 0; i < name.size();) {
    const auto point = decode_utf8(name, i, Utf8Rules::lenient);
    if (!point) return false;
    const std::uint32_t code_point = point->value;
    i += point->length;
    if (hfs_ignores(code_point)) continue;
    if (code_point >= 0x80 || matched == word.size() || lower(static_cast<char>(code_point)) != word[matched])
      return false;
    ++matched;
  }
  return matched == word.size();
}

// Whether some file system git protects reads `name` as `word` (".git", ".gitmodules").
bool reads_as(std::string_view name, std::string_view word, std::string_view short_prefix, char last_digit) {
  return ntfs_reads_as(name, word, short_prefix, last_digit) || hfs_reads_as(name, word);
}

}  // namespace

std::string printable_path(std::string_view path) {
  for (const char c : path)
    if (is_control_byte(c)) return fmt::format("{:?}", path);
  return std::string(path);
}

std::optional<std::string> control_character_reason(std::string_view path) {
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (!is_control_byte(path[i])) continue;
    const auto byte = static_cast<unsigned char>(path[i]);
    const std::size_t slash = path.rfind('/', i);
    const std::size_t start = slash == std::string_view::npos ? 0 : slash + 1;
    const std::string name(path.substr(start, path.find('/', i) - start));
    return fmt::format(
        "the name {:?} holds a control character (byte 0x{:02x}), which Windows refuses "
        "and terminals and tools that list names mis-show",
        name, byte);
  }
  return std::nullopt;
}

std::optional<std::string> git_component_reason(std::string_view component) {
  // NTFS also splits names at '\', so "a\.git" on Windows is a .git directory.
  std::size_t start = 0;
  while (start <= component.size()) {
    const std::size_t end = std::min(component.find('\\', start), component.size());
    const std::string_view part = component.substr(start, end - start);
    if (part == ".git") return std::string("the path goes into a .git directory");
    if (reads_as(part, ".git", "git", '1'))
      return fmt::format(
          "the name {:?} is .git on case-insensitive, Windows or macOS file systems, "
          "so the path goes into a .git directory",
          std::string(component));
    start = end + 1;
  }
  return std::nullopt;
}

std::optional<std::string> git_symlink_reason(std::string_view name) {
  // Windows gives .gitmodules the 8.3 names GITMOD~1 to ~4, then hashed ones like GI7EBA~1.
  if (reads_as(name, ".gitmodules", "gitmod", '4') || reads_as(name, ".gitmodules", "gi7eba", '9'))
    return fmt::format(
        "{:?} is a symlink named .gitmodules (as some file system reads it), which git "
        "refuses: it would read submodule settings through the link",
        std::string(name));
  return std::nullopt;
}

}  // namespace apexnpu
