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

  // Where the hunk applies (1-based line of its first pattern line), or nothing; a found
  // place moves the offset later hunks start from.
  std::optional<std::int64_t> locate(const HunkShape& h, int fuzz) {
    const Window w = window(h, fuzz);
    if (h.pattern.empty()) return w.first_guess;
    std::optional<std::int64_t> offset;
    if (w.prefix_fuzz < 0 && h.first <= 1)
      offset = offset_at_top(h, w);
    else if (w.suffix_fuzz < 0)
      offset = offset_at_end(h, w);
    else
      offset = nearest_offset(h, w);
    if (!offset) return std::nullopt;
    in_offset_ += *offset;
    return w.first_guess + *offset;
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
  // GNU's bounds for one hunk at one fuzz: the guessed line, the fuzz left at each end
  // (negative when the context there is shorter than the other end's), and how far the
  // search may go either way.
  struct Window {
    std::int64_t first_guess = 0;
    std::int64_t prefix_fuzz = 0;
    std::int64_t suffix_fuzz = 0;
    std::int64_t max_pos_offset = 0;
    std::int64_t max_neg_offset = 0;
    std::int64_t max_offset = 0;
    std::int64_t max_where = 0;
  };

  Window window(const HunkShape& h, int fuzz) const {
    const std::int64_t pat_lines = static_cast<std::int64_t>(h.pattern.size());
    const std::int64_t input_lines = static_cast<std::int64_t>(input_.size());
    const std::int64_t context = std::max(h.prefix_context, h.suffix_context);
    Window w;
    w.first_guess = h.first + in_offset_;
    w.prefix_fuzz = fuzz + h.prefix_context - context;
    w.suffix_fuzz = fuzz + h.suffix_context - context;
    w.max_where = input_lines - (pat_lines - w.suffix_fuzz) + 1;
    const std::int64_t min_where = last_frozen_ + 1 - (h.prefix_context - w.prefix_fuzz);
    w.max_pos_offset = w.max_where - w.first_guess;
    w.max_neg_offset = w.first_guess - min_where;
    w.max_offset = std::max(w.max_pos_offset, w.max_neg_offset);
    if (w.first_guess <= w.max_neg_offset) w.max_neg_offset = w.first_guess - 1;
    return w;
  }

  // Short leading context at the top of the file: the hunk can only match the start.
  std::optional<std::int64_t> offset_at_top(const HunkShape& h, const Window& w) const {
    const std::int64_t pat_lines = static_cast<std::int64_t>(h.pattern.size());
    const std::int64_t input_lines = static_cast<std::int64_t>(input_.size());
    if (w.suffix_fuzz < 0 && (pat_lines != input_lines || h.prefix_context < last_frozen_))
      return std::nullopt;
    const std::int64_t offset = 1 - w.first_guess;
    if (last_frozen_ <= h.prefix_context && offset <= w.max_pos_offset &&
        matches(h, w.first_guess + offset, 0, w.suffix_fuzz))
      return offset;
    return std::nullopt;
  }

  // Short trailing context: the hunk can only match the end of the file.
  std::optional<std::int64_t> offset_at_end(const HunkShape& h, const Window& w) const {
    const std::int64_t prefix_fuzz = std::max<std::int64_t>(w.prefix_fuzz, 0);
    const std::int64_t offset = w.first_guess - (static_cast<std::int64_t>(input_.size()) -
                                                 static_cast<std::int64_t>(h.pattern.size()) + 1);
    if (offset <= w.max_neg_offset && matches(h, w.first_guess - offset, prefix_fuzz, 0)) return -offset;
    return std::nullopt;
  }

  // GNU's search, from offset 0 outwards, alternating. When the pattern compares a line, a
  // place puts its lines inside the file or cannot match: the offsets before the first such
  // place are skipped, so a header naming line 10^8, or an earlier hunk found 10^8 lines
  // away, costs what the file's length allows rather than 10^8 steps.
  std::optional<std::int64_t> nearest_offset(const HunkShape& h, const Window& w) const {
    const std::int64_t pat_lines = static_cast<std::int64_t>(h.pattern.size());
    const std::int64_t prefix_fuzz = std::max<std::int64_t>(w.prefix_fuzz, 0);
    std::int64_t first_offset = 0;
    if (pat_lines - w.suffix_fuzz >= 1 + prefix_fuzz) {
      const std::int64_t first_pos = std::max<std::int64_t>(0, 1 - prefix_fuzz - w.first_guess);
      const std::int64_t first_neg = std::max<std::int64_t>(1, w.first_guess - w.max_where);
      first_offset = std::min(first_pos <= w.max_pos_offset ? first_pos : w.max_offset + 1,
                              first_neg <= w.max_neg_offset ? first_neg : w.max_offset + 1);
    }
    for (std::int64_t offset = first_offset; offset <= w.max_offset; ++offset) {
      if (offset <= w.max_pos_offset && matches(h, w.first_guess + offset, prefix_fuzz, w.suffix_fuzz))
        return offset;
      if (offset > 0 && offset <= w.max_neg_offset &&
          matches(h, w.first_guess - offset, prefix_fuzz, w.suffix_fuzz))
        return -offset;
    }
    return std::nullopt;
  }

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

// Where a hunk applies: the line and the fuzz used, or nothing; `reversed` when it is the first
// hunk and it matches only reversed (GNU patch -N: the patch was applied already).
struct HunkPlace {
  std::optional<std::int64_t> where;
  int fuzz = 0;
  bool reversed = false;
};

HunkPlace find_place(FileApplier& applier, const Hunk& hunk, const HunkShape& shape, bool first_hunk) {
  const int fuzz_limit = static_cast<int>(
      std::min<std::int64_t>(max_fuzz, std::max(shape.prefix_context, shape.suffix_context)));
  HunkPlace place;
  for (int fuzz = 0; fuzz <= fuzz_limit; ++fuzz) {
    if ((place.where = applier.locate(shape, fuzz))) {
      place.fuzz = fuzz;
      return place;
    }
    if (first_hunk) {
      FileApplier probe = applier;  // locate moves the offset it keeps; the probe must not
      if (probe.locate(shape_of(hunk, true), fuzz)) {
        place.reversed = true;
        return place;
      }
    }
  }
  return place;
}

// Applies one hunk where it was found, or records why not (its text joins the file's rejects).
HunkReport place_hunk(FileApplier& applier, const FilePatch& file, const Hunk& hunk, const HunkShape& shape,
                      const HunkPlace& place, std::string& rejects) {
  HunkReport report{hunk.header, hunk.patch_line, FileStatus::clean, 0, 0, {}};
  if (!place.where) {
    report.status = FileStatus::failed;
    report.reason = "its lines were not found in the file, not even at an offset or with fuzz 2";
  } else if (!applier.apply(hunk, *place.where)) {
    report.status = FileStatus::failed;
    report.reason = fmt::format(
        "misordered hunks: it would apply at line {}, inside or before an earlier "
        "hunk's changes (output would be garbled)",
        *place.where);
  } else {
    report.offset = *place.where - shape.first;
    report.fuzz = place.fuzz;
    report.status = place.fuzz > 0       ? FileStatus::fuzz
                    : report.offset != 0 ? FileStatus::offset
                                         : FileStatus::clean;
  }
  if (report.status == FileStatus::failed) render_reject(rejects, file, hunk);
  return report;
}

// The report of a file patch none of whose hunks can apply, for one reason.
FileReport failed_file(const FilePatch& file, FileReport report, const std::string& reason) {
  report.status = FileStatus::failed;
  report.hunks.clear();
  report.rejects.clear();
  for (const auto& hunk : file.hunks) {
    report.hunks.push_back({hunk.header, hunk.patch_line, FileStatus::failed, 0, 0, reason});
    render_reject(report.rejects, file, hunk);
  }
  if (file.hunks.empty())
    report.hunks.push_back({"(no hunks)", file.patch_line, FileStatus::failed, 0, 0, reason});
  return report;
}

// Puts the patched content into the tree: a deletion only when nothing is left, a failed
// modification with the hunks that did apply (as GNU leaves it).
void store_content(FileTree& tree, const FilePatch& file, FileReport& report, const FileEntry* existing,
                   std::string content) {
  if (report.status == FileStatus::failed) {
    if (file.operation == FileOperation::modify) tree[report.path].content = std::move(content);
    return;
  }
  if (file.operation == FileOperation::remove) {
    if (content.empty()) {
      tree.erase(report.path);
      return;
    }
    report.status = FileStatus::failed;
    report.hunks.push_back({"(deletion)", file.patch_line, FileStatus::failed, 0, 0,
                            "the file has more content than the patch deletes; not deleting it"});
    return;
  }
  FileEntry entry;
  entry.content = std::move(content);
  entry.kind = existing != nullptr ? existing->kind : FileKind::regular;
  if (file.operation == FileOperation::create || file.mode_changed)
    entry.kind = file.executable ? FileKind::executable : FileKind::regular;
  tree[report.path] = std::move(entry);
}

FileReport apply_file_patch(const FilePatch& file, FileTree& tree) {
  FileReport report;
  report.path = file.target_path();
  report.operation = file.operation;
  const bool creating = file.operation == FileOperation::create;
  if (auto problem = path_problem(tree, report.path, creating))
    return failed_file(file, std::move(report), *problem);

  const FileEntry* existing = creating ? nullptr : &tree.at(report.path);
  FileApplier applier(existing != nullptr ? std::string_view(existing->content) : std::string_view());
  for (std::size_t k = 0; k < file.hunks.size(); ++k) {
    const Hunk& hunk = file.hunks[k];
    const HunkShape shape = shape_of(hunk, false);
    const HunkPlace place = find_place(applier, hunk, shape, k == 0);
    if (place.reversed)
      return failed_file(file, std::move(report),
                         "the patch seems applied already (its first hunk matches reversed)");
    report.hunks.push_back(place_hunk(applier, file, hunk, shape, place, report.rejects));
    report.status = std::max(report.status, report.hunks.back().status);
  }
  store_content(tree, file, report, existing, applier.finish());
  return report;
}

}  // namespace

ApplyResult apply_patch(const PatchSet& patch, FileTree input) {
  ApplyResult result;
  result.tree = std::move(input);
  for (const FilePatch& file : patch.files) {
    FileReport report = apply_file_patch(file, result.tree);
    if (report.status == FileStatus::failed) result.ok = false;
    result.rejects += report.rejects;
    result.files.push_back(std::move(report));
  }
  return result;
}

}  // namespace apexnpu::patch
