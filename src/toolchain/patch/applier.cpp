// The patch applier, with GNU patch's rules for finding a hunk: the expected line (shifted by
// the offset earlier hunks found), then the nearest offset, then fuzz 1 and 2.
#include <fmt/core.h>

#include <algorithm>
#include <optional>

#include "patch/lines.h"
#include "patch/patch_engine.h"
#include "patch/quoted_name.h"

namespace apexnpu::patch {

std::string_view to_string(FileStatus status) {
  switch (status) {
    case FileStatus::clean:
      return "clean";
    case FileStatus::offset:
      return "offset";
    case FileStatus::fuzz:
      return "fuzz";
    case FileStatus::failed:
      return "failed";
  }
  return "failed";
}

std::string_view to_string(FileOperation op) {
  switch (op) {
    case FileOperation::create:
      return "create";
    case FileOperation::remove:
      return "remove";
    case FileOperation::modify:
      break;
  }
  return "modify";
}

namespace {

constexpr int max_fuzz = 2;

// A hunk seen as GNU sees it: the old-side lines (the pattern) and where its context is.
struct HunkShape {
  std::vector<std::string_view> pattern;  // context and removed lines, in order
  std::int64_t first = 0;                 // the line the pattern should start at (1-based)
  std::int64_t prefix_context = 0;        // context lines before the first change
  std::int64_t suffix_context = 0;        // context lines after the last change
};

HunkShape shape_of(const Hunk& hunk, bool reversed) {
  const LineKind dropped = reversed ? LineKind::removed : LineKind::added;
  HunkShape shape;
  for (const auto& line : hunk.lines)
    if (line.kind != dropped) shape.pattern.push_back(line.text);
  std::int64_t prefix = 0;
  while (prefix < static_cast<std::int64_t>(hunk.lines.size()) &&
         hunk.lines[prefix].kind == LineKind::context)
    ++prefix;
  std::int64_t suffix = 0;
  while (suffix < static_cast<std::int64_t>(hunk.lines.size()) &&
         hunk.lines[hunk.lines.size() - 1 - suffix].kind == LineKind::context)
    ++suffix;
  if (prefix == static_cast<std::int64_t>(hunk.lines.size())) suffix = 0;  // context only
  shape.prefix_context = prefix;
  shape.suffix_context = suffix;
  const std::int64_t start = reversed ? hunk.new_start : hunk.old_start;
  // An empty old side "@@ -N,0" appends after line N.
  shape.first = shape.pattern.empty() ? start + 1 : start;
  return shape;
}

// One file's input lines and the state GNU patch keeps while applying its hunks.
class FileApplier {
 public:
  explicit FileApplier(std::string_view content) : input_(split_lines(content)) {}

  // Where the hunk applies (1-based line of its first pattern line), or nothing.
  std::optional<std::int64_t> locate(const HunkShape& h, int fuzz) {
    const std::int64_t pat_lines = static_cast<std::int64_t>(h.pattern.size());
    const std::int64_t input_lines = static_cast<std::int64_t>(input_.size());
    const std::int64_t first_guess = h.first + in_offset_;
    if (pat_lines == 0) return first_guess;
    const std::int64_t context = std::max(h.prefix_context, h.suffix_context);
    std::int64_t prefix_fuzz = fuzz + h.prefix_context - context;
    const std::int64_t suffix_fuzz = fuzz + h.suffix_context - context;
    const std::int64_t max_where = input_lines - (pat_lines - suffix_fuzz) + 1;
    const std::int64_t min_where = last_frozen_ + 1 - (h.prefix_context - prefix_fuzz);
    const std::int64_t max_pos_offset = max_where - first_guess;
    std::int64_t max_neg_offset = first_guess - min_where;
    const std::int64_t max_offset = std::max(max_pos_offset, max_neg_offset);
    if (first_guess <= max_neg_offset) max_neg_offset = first_guess - 1;

    if (prefix_fuzz < 0 && h.first <= 1) {
      // Short leading context at the top of the file: it can only match the start.
      if (suffix_fuzz < 0 && (pat_lines != input_lines || h.prefix_context < last_frozen_))
        return std::nullopt;
      const std::int64_t offset = 1 - first_guess;
      if (last_frozen_ <= h.prefix_context && offset <= max_pos_offset &&
          matches(h, first_guess + offset, 0, suffix_fuzz)) {
        in_offset_ += offset;
        return first_guess + offset;
      }
      return std::nullopt;
    }
    if (prefix_fuzz < 0) prefix_fuzz = 0;
    if (suffix_fuzz < 0) {
      // Short trailing context: it can only match the end of the file.
      const std::int64_t offset = first_guess - (input_lines - pat_lines + 1);
      if (offset <= max_neg_offset && matches(h, first_guess - offset, prefix_fuzz, 0)) {
        in_offset_ -= offset;
        return first_guess - offset;
      }
      return std::nullopt;
    }
    // GNU's search, from offset 0 outwards, alternating. When the pattern compares a line, a
    // place puts its lines inside the file or cannot match: the offsets before the first such
    // place are skipped, so a header naming line 10^8, or an earlier hunk found 10^8 lines
    // away, costs what the file's length allows rather than 10^8 steps.
    std::int64_t first_offset = 0;
    if (pat_lines - suffix_fuzz >= 1 + prefix_fuzz) {
      const std::int64_t first_pos = std::max<std::int64_t>(0, 1 - prefix_fuzz - first_guess);
      const std::int64_t first_neg = std::max<std::int64_t>(1, first_guess - max_where);
      first_offset = std::min(first_pos <= max_pos_offset ? first_pos : max_offset + 1,
                              first_neg <= max_neg_offset ? first_neg : max_offset + 1);
    }
    for (std::int64_t offset = first_offset; offset <= max_offset; ++offset) {
      if (offset <= max_pos_offset && matches(h, first_guess + offset, prefix_fuzz, suffix_fuzz)) {
        in_offset_ += offset;
        return first_guess + offset;
      }
      if (offset > 0 && offset <= max_neg_offset &&
          matches(h, first_guess - offset, prefix_fuzz, suffix_fuzz)) {
        in_offset_ -= offset;
        return first_guess - offset;
      }
    }
    return std::nullopt;
  }

  // Applies the hunk at `where` as GNU does: input lines are copied lazily, removed lines
  // skipped, added lines written; context comes from the input, not from the patch. False, with
  // nothing changed, when its first change lies before the end of an earlier hunk's changes
  // (GNU's "misordered hunks! output would be garbled").
  bool apply(const Hunk& hunk, std::int64_t where) {
    std::int64_t old = 1;
    bool first_change = true;
    for (const auto& line : hunk.lines) {
      if (line.kind == LineKind::context) {
        ++old;
        continue;
      }
      const std::int64_t before = where - 1 + old - 1;
      if (first_change && last_frozen_ > before) return false;
      first_change = false;
      copy_till(before);
      if (line.kind == LineKind::removed) {
        ++last_frozen_;
        ++old;
      } else {
        output_ += line.text;
      }
    }
    return true;
  }

  std::string finish() {
    copy_till(static_cast<std::int64_t>(input_.size()));
    return std::move(output_);
  }

 private:
  bool matches(const HunkShape& h, std::int64_t base, std::int64_t prefix_fuzz,
               std::int64_t suffix_fuzz) const {
    const std::int64_t last = static_cast<std::int64_t>(h.pattern.size()) - suffix_fuzz;
    std::int64_t iline = base + prefix_fuzz;
    for (std::int64_t pline = 1 + prefix_fuzz; pline <= last; ++pline, ++iline) {
      if (iline < 1 || iline > static_cast<std::int64_t>(input_.size())) return false;
      if (input_[iline - 1] != h.pattern[pline - 1]) return false;
    }
    return true;
  }

  void copy_till(std::int64_t line) {
    while (last_frozen_ < line && last_frozen_ < static_cast<std::int64_t>(input_.size()))
      output_ += input_[last_frozen_++];
  }

  std::vector<std::string_view> input_;
  std::string output_;
  std::int64_t last_frozen_ = 0;
  std::int64_t in_offset_ = 0;
};

// Appends a failed hunk to the file's reject text (the file header before its first one).
void render_reject(std::string& rejects, const FilePatch& file, const Hunk& hunk) {
  if (rejects.empty())
    rejects += fmt::format("--- {}\n+++ {}\n",
                           file.old_path.empty() ? "/dev/null" : header_name("a/", file.old_path),
                           file.new_path.empty() ? "/dev/null" : header_name("b/", file.new_path));
  rejects += hunk.header + "\n";
  for (const auto& line : hunk.lines) {
    rejects += static_cast<char>(line.kind);
    rejects += line.text;
    if (!ends_with_newline(line.text)) rejects += "\n\\ No newline at end of file\n";
  }
}

// Why the file patch cannot touch its path at all (symlinks, files in the way), or nothing.
std::optional<std::string> path_problem(const FileTree& tree, const std::string& path, bool creating) {
  for (std::size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const auto it = tree.find(path.substr(0, slash));
    if (it == tree.end()) continue;
    if (it->second.kind == FileKind::symlink)
      return fmt::format("{} goes through the symlink {}", path, it->first);
    return fmt::format("{} goes through {}, which is a file", path, it->first);
  }
  const auto it = tree.find(path);
  if (it != tree.end() && it->second.kind == FileKind::symlink)
    return fmt::format("{} is a symlink; patches never write through one", path);
  if (creating) {
    if (it != tree.end()) return fmt::format("{} already exists, and the patch creates it", path);
    const auto below = tree.lower_bound(path + "/");
    if (below != tree.end() && below->first.starts_with(path + "/"))
      return fmt::format("{} is a directory, and the patch creates it as a file", path);
  } else if (it == tree.end()) {
    return fmt::format("{} does not exist", path);
  }
  return std::nullopt;
}

}  // namespace

ApplyResult apply_patch(const PatchSet& patch, FileTree input) {
  ApplyResult result;
  result.tree = std::move(input);
  for (const FilePatch& file : patch.files) {
    FileReport report;
    report.path = file.target_path();
    report.operation = file.operation;
    auto fail_file = [&](const std::string& reason) {
      report.status = FileStatus::failed;
      report.rejects.clear();
      for (const auto& hunk : file.hunks) {
        report.hunks.push_back({hunk.header, hunk.patch_line, FileStatus::failed, 0, 0, reason});
        render_reject(report.rejects, file, hunk);
      }
      if (file.hunks.empty())
        report.hunks.push_back({"(no hunks)", file.patch_line, FileStatus::failed, 0, 0, reason});
      result.ok = false;
    };

    const bool creating = file.operation == FileOperation::create;
    if (auto problem = path_problem(result.tree, report.path, creating)) {
      fail_file(*problem);
      result.rejects += report.rejects;
      result.files.push_back(std::move(report));
      continue;
    }
    const FileEntry* existing = creating ? nullptr : &result.tree.at(report.path);
    FileApplier applier(existing != nullptr ? std::string_view(existing->content) : std::string_view());
    bool reversed = false;
    for (std::size_t k = 0; k < file.hunks.size() && !reversed; ++k) {
      const Hunk& hunk = file.hunks[k];
      const HunkShape shape = shape_of(hunk, false);
      const int fuzz_limit = static_cast<int>(
          std::min<std::int64_t>(max_fuzz, std::max(shape.prefix_context, shape.suffix_context)));
      std::optional<std::int64_t> where;
      int fuzz = 0;
      for (; fuzz <= fuzz_limit && !where; ++fuzz) {
        where = applier.locate(shape, fuzz);
        if (!where && k == 0) {
          // GNU patch -N: a first hunk that only matches reversed means the patch was applied.
          FileApplier probe = applier;
          if (probe.locate(shape_of(hunk, true), fuzz)) {
            reversed = true;
            break;
          }
        }
      }
      if (where) --fuzz;
      HunkReport hr{hunk.header, hunk.patch_line, FileStatus::clean, 0, 0, {}};
      if (!where) {
        hr.status = FileStatus::failed;
        hr.reason = reversed ? "the patch seems applied already (the hunk matches reversed)"
                             : "its lines were not found in the file, not even at an offset or with fuzz 2";
        render_reject(report.rejects, file, hunk);
        result.ok = false;
      } else if (!applier.apply(hunk, *where)) {
        hr.status = FileStatus::failed;
        hr.reason = fmt::format(
            "misordered hunks: it would apply at line {}, inside or before an earlier "
            "hunk's changes (output would be garbled)",
            *where);
        render_reject(report.rejects, file, hunk);
        result.ok = false;
      } else {
        hr.offset = *where - shape.first;
        hr.fuzz = fuzz;
        hr.status = fuzz > 0 ? FileStatus::fuzz : hr.offset != 0 ? FileStatus::offset : FileStatus::clean;
      }
      report.hunks.push_back(std::move(hr));
    }
    if (reversed) {
      report.hunks.clear();
      fail_file("the patch seems applied already (its first hunk matches reversed)");
      result.rejects += report.rejects;
      result.files.push_back(std::move(report));
      continue;
    }
    for (const auto& h : report.hunks) report.status = std::max(report.status, h.status);

    std::string content = applier.finish();
    if (report.status != FileStatus::failed) {
      if (file.operation == FileOperation::remove) {
        if (!content.empty()) {
          report.status = FileStatus::failed;
          report.hunks.push_back({"(deletion)", file.patch_line, FileStatus::failed, 0, 0,
                                  "the file has more content than the patch deletes; not deleting it"});
          result.ok = false;
        } else {
          result.tree.erase(report.path);
        }
      } else {
        FileEntry entry;
        entry.content = std::move(content);
        entry.kind = existing != nullptr ? existing->kind : FileKind::regular;
        if (creating || file.mode_changed)
          entry.kind = file.executable ? FileKind::executable : FileKind::regular;
        result.tree[report.path] = std::move(entry);
      }
    } else if (file.operation == FileOperation::modify) {
      result.tree[report.path].content = std::move(content);  // the hunks that applied, as GNU
    }
    result.rejects += report.rejects;
    result.files.push_back(std::move(report));
  }
  return result;
}

}  // namespace apexnpu::patch
