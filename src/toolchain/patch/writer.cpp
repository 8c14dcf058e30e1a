// The patch writer: one deterministic git-style rendering that GNU patch -p1 and git apply
// both accept; names that need it are C-quoted in every header.
#include <fmt/core.h>

#include <algorithm>

#include "core/error.h"
#include "patch/line_diff.h"
#include "patch/lines.h"
#include "patch/patch_engine.h"
#include "patch/quoted_name.h"

namespace apexnpu::patch {

namespace {

constexpr std::size_t context_lines = 3;

std::string_view mode_of(FileKind kind) { return kind == FileKind::executable ? "100755" : "100644"; }

void append_line(std::string& out, char prefix, std::string_view text) {
  out += prefix;
  out += text;
  if (!ends_with_newline(text)) out += "\n\\ No newline at end of file\n";
}

// "-a,b": a count of 0 names the line before the (empty) range, as diff writes it.
std::string range(std::size_t start, std::size_t count) {
  if (count == 1) return fmt::format("{}", start + 1);
  return fmt::format("{},{}", count == 0 ? start : start + 1, count);
}

void render_hunks(std::string& out, const std::vector<std::string_view>& a,
                  const std::vector<std::string_view>& b) {
  const std::vector<Edit> edits = diff_lines(a, b);
  std::size_t i = 0;
  while (i < edits.size()) {
    // Find the next change, then extend the hunk while changes are within 2*context lines.
    while (i < edits.size() && edits[i].kind == EditKind::keep) ++i;
    if (i == edits.size()) break;
    const std::size_t begin = i >= context_lines ? i - context_lines : 0;
    std::size_t end = i;  // one past the last change
    std::size_t j = i;
    while (j < edits.size()) {
      if (edits[j].kind != EditKind::keep) {
        end = j + 1;
        ++j;
        continue;
      }
      std::size_t run = 0;
      while (j + run < edits.size() && edits[j + run].kind == EditKind::keep) ++run;
      if (j + run == edits.size() || run > 2 * context_lines) break;
      j += run;
    }
    const std::size_t stop = std::min(edits.size(), end + context_lines);

    std::size_t old_count = 0, new_count = 0;
    for (std::size_t k = begin; k < stop; ++k) {
      old_count += edits[k].kind != EditKind::insert;
      new_count += edits[k].kind != EditKind::remove;
    }
    // Every edit records how many lines of each side precede it, which is where the hunk starts.
    const std::size_t old_start = edits[begin].old_index, new_start = edits[begin].new_index;
    out += fmt::format("@@ -{} +{} @@\n", range(old_start, old_count), range(new_start, new_count));
    for (std::size_t k = begin; k < stop; ++k) {
      const Edit& e = edits[k];
      if (e.kind == EditKind::keep) append_line(out, ' ', a[e.old_index]);
      if (e.kind == EditKind::remove) append_line(out, '-', a[e.old_index]);
      if (e.kind == EditKind::insert) append_line(out, '+', b[e.new_index]);
    }
    i = stop;
  }
}

}  // namespace

// Deletions first, then the rest, each in path order: a file that replaces a directory of the
// same name is created only once the directory's files are gone (GNU patch applies in order).
std::vector<std::string> section_order(const FileTree& new_tree, const std::vector<std::string>& paths) {
  std::vector<std::string> sorted = paths;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::stable_partition(sorted.begin(), sorted.end(),
                        [&](const std::string& path) { return !new_tree.contains(path); });
  return sorted;
}

std::string write_section(const std::string& path, const FileEntry* before, const FileEntry* after) {
  if (before == nullptr && after == nullptr)
    throw Error(fmt::format("cannot diff {}: it is in neither tree", path));
  if ((before != nullptr && before->kind == FileKind::symlink) ||
      (after != nullptr && after->kind == FileKind::symlink))
    throw Error(fmt::format("cannot put {} in the patch: it is a symlink", path),
                "patches carry regular files only; replace the symlink with a file");
  if (before != nullptr && after != nullptr && *before == *after) return {};

  // GNU patch 2.7.6 cannot delete an empty file from a header-only git diff (it skips it or
  // assumes -R), while it and git apply both create one; so only creation is supported.
  if (after == nullptr && before->content.empty())
    throw Error(
        fmt::format("cannot put the deletion of {} in the patch: the file is empty", path),
        "GNU patch cannot delete an empty file from a patch; delete it by hand or give it content first");
  const std::string old_name = header_name("a/", path), new_name = header_name("b/", path);
  std::string out = fmt::format("diff --git {} {}\n", old_name, new_name);
  if (before == nullptr) out += fmt::format("new file mode {}\n", mode_of(after->kind));
  if (after == nullptr) out += fmt::format("deleted file mode {}\n", mode_of(before->kind));
  if (before != nullptr && after != nullptr && before->kind != after->kind)
    out += fmt::format("old mode {}\nnew mode {}\n", mode_of(before->kind), mode_of(after->kind));
  const std::string_view old_content = before != nullptr ? std::string_view(before->content) : "";
  const std::string_view new_content = after != nullptr ? std::string_view(after->content) : "";
  if (old_content == new_content) return out;  // a mode change, or an empty file made or removed
  out += fmt::format("--- {}\n+++ {}\n", before == nullptr ? "/dev/null" : old_name,
                     after == nullptr ? "/dev/null" : new_name);
  render_hunks(out, split_lines(old_content), split_lines(new_content));
  return out;
}

std::string write_patch(const FileTree& old_tree, const FileTree& new_tree,
                        const std::vector<std::string>& paths) {
  auto find = [](const FileTree& tree, const std::string& path) -> const FileEntry* {
    const auto it = tree.find(path);
    return it == tree.end() ? nullptr : &it->second;
  };
  std::string out;
  for (const std::string& path : section_order(new_tree, paths))
    out += write_section(path, find(old_tree, path), find(new_tree, path));
  return out;
}

}  // namespace apexnpu::patch
