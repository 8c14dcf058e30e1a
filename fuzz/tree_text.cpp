#include "tree_text.h"

#include <string>

#include "core/relative_path.h"
#include "patch/quoted_name.h"

namespace apexnpu::fuzz {

namespace {

constexpr std::string_view separator = "\n%%%%\n";
constexpr std::string_view section_start = "=== ";

// Whether `path` would clash with a file or directory the tree already has.
bool clashes(const FileTree& tree, const std::string& path) {
  for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1))
    if (tree.contains(path.substr(0, slash))) return true;
  const auto below = tree.lower_bound(path + "/");
  return tree.contains(path) || (below != tree.end() && below->first.starts_with(path + "/"));
}

void add_section(FileTree& tree, std::string_view header, std::string_view content, bool allow_symlinks) {
  FileEntry entry;
  entry.content = std::string(content);
  if (!header.empty() && (header.front() == '*' || header.front() == '@')) {
    entry.kind = header.front() == '*' ? FileKind::executable : FileKind::symlink;
    header.remove_prefix(1);
  }
  if (entry.kind == FileKind::symlink && !allow_symlinks) return;
  std::string path(header);
  if (!header.empty() && header.front() == '"') {
    const auto decoded = patch::decode_quoted_name(header);
    if (!decoded) return;
    path = decoded->name;
  }
  if (unsafe_path_reason(path) || clashes(tree, path)) return;
  tree.emplace(std::move(path), std::move(entry));
}

}  // namespace

std::pair<std::string_view, std::string_view> split_at_separator(std::string_view text) {
  const std::size_t at = text.find(separator);
  if (at == std::string_view::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + separator.size())};
}

FileTree read_tree_text(std::string_view text, bool allow_symlinks) {
  FileTree tree;
  std::size_t start = text.starts_with(section_start) ? 0 : text.find("\n=== ");
  while (start != std::string_view::npos) {
    if (text[start] == '\n') ++start;
    const std::size_t header_end = std::min(text.find('\n', start), text.size());
    const std::string_view header =
        text.substr(start + section_start.size(), header_end - start - section_start.size());
    const std::size_t body = std::min(header_end + 1, text.size());
    const std::size_t next = text.find("\n=== ", header_end);
    const std::size_t body_end = next == std::string_view::npos ? text.size() : next;
    add_section(tree, header, text.substr(body, body_end > body ? body_end - body : 0), allow_symlinks);
    start = next;
  }
  return tree;
}

}  // namespace apexnpu::fuzz
