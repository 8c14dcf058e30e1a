#include "git/ref_store.h"

#include <fmt/core.h>

#include <algorithm>

#include "fs/file_io.h"

namespace apexnpu::git {

namespace {

constexpr int kDeepestSymref = 5;  // as git

// A name that stays inside the repository and that git could have written: components neither
// empty nor "." or "..", no control characters, none of git's forbidden characters.
bool is_safe_ref_name(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.back() == '/' || name.back() == '.') return false;
  if (name.find("//") != std::string_view::npos || name.find("..") != std::string_view::npos ||
      name.find("@{") != std::string_view::npos || name.find("/.") != std::string_view::npos ||
      name.front() == '.')
    return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == ' ' || c == '~' || c == '^' ||
           c == ':' || c == '?' || c == '*' || c == '[' || c == '\\';
  });
}

// Names git looks up as they are: full names under refs/, and HEAD-like ones (HEAD,
// FETCH_HEAD, ORIG_HEAD: capitals and underscores).
bool is_taken_as_is(std::string_view name) {
  if (name.starts_with("refs/")) return true;
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
}

std::string_view trim_line(std::string_view text) {
  const std::size_t eol = text.find('\n');
  text = text.substr(0, eol);
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  return text;
}

}  // namespace

RefStore::RefStore(std::filesystem::path git_dir)
    : git_dir_(std::move(git_dir)), packed_refs_(try_read_file(git_dir_ / "packed-refs")) {}

std::optional<git_oid> RefStore::find(std::string_view full_name) const { return find(full_name, 0); }

std::optional<git_oid> RefStore::find(std::string_view full_name, int depth) const {
  if (depth > kDeepestSymref || !is_safe_ref_name(full_name)) return std::nullopt;
  std::optional<std::string> text = try_read_file(git_dir_ / std::string(full_name));
  if (!text) text = packed(full_name);
  if (!text) return std::nullopt;
  const std::string_view line = trim_line(*text);
  if (line.starts_with("ref:")) {
    std::string_view target = line.substr(4);
    while (!target.empty() && target.front() == ' ') target.remove_prefix(1);
    return find(target, depth + 1);
  }
  return parse_hex_id(line);
}

// packed-refs: "<id> <name>" lines, "^<id>" lines peeling the tag above, "#" comments.
std::optional<std::string> RefStore::packed(std::string_view full_name) const {
  if (!packed_refs_) return std::nullopt;
  std::string_view rest = *packed_refs_;
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    const std::string_view line = trim_line(rest.substr(0, eol));
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
    if (line.size() > kHexIdSize + 1 && line[kHexIdSize] == ' ' && line.substr(kHexIdSize + 1) == full_name)
      return std::string(line.substr(0, kHexIdSize));
  }
  return std::nullopt;
}

std::optional<git_oid> RefStore::dwim(std::string_view name) const {
  if (is_taken_as_is(name))
    if (const auto id = find(name)) return id;
  for (const char* rule : {"refs/{}", "refs/tags/{}", "refs/heads/{}", "refs/remotes/{}",
                           "refs/remotes/{}/HEAD"})
    if (const auto id = find(fmt::format(fmt::runtime(rule), name))) return id;
  return std::nullopt;
}

}  // namespace apexnpu::git
