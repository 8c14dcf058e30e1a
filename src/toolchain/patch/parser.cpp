// The patch parser: `diff -Nur` and `git diff` styles into the one PatchSet model.
#include <fmt/core.h>

#include <map>

#include "core/error.h"
#include "core/relative_path.h"
#include "patch/lines.h"
#include "patch/patch_engine.h"

namespace apexnpu::patch {

namespace {

// Counts above this are refused before anything is sized from them.
constexpr std::int64_t max_hunk_number = 100'000'000;

bool starts_with(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

struct HeaderName {
  std::string name;       // as written, timestamp removed
  bool absent = false;    // /dev/null
  bool epoch = false;     // diff -N's timestamp for a missing file
};

class Parser {
 public:
  Parser(std::string_view bytes, std::string_view source_name, int strip)
      : bytes_(bytes), lines_(split_lines(bytes)), source_(source_name), strip_(strip) {}

  PatchSet run() {
    PatchSet set;
    set.source_name = source_;
    while (i_ < lines_.size()) {
      const std::string_view line = lines_[i_];
      if (starts_with(line, "diff --git ")) {
        set.files.push_back(parse_git_file());
      } else if (starts_with(line, "--- ") && i_ + 1 < lines_.size() &&
                 starts_with(lines_[i_ + 1], "+++ ")) {
        FilePatch file;
        file.patch_line = i_ + 1;
        parse_unified_file(file, nullptr);
        set.files.push_back(std::move(file));
      } else if (starts_with(line, "Binary files ") || starts_with(line, "GIT binary patch")) {
        fail(i_, "binary diffs are not supported");
      } else if (starts_with(line, "@@ ")) {
        fail(i_, "a hunk without a file header (no '--- ' and '+++ ' lines before it)");
      } else {
        ++i_;  // text between diffs, as GNU patch allows: comments, "diff -Nur" lines, ...
      }
    }
    if (set.files.empty() && bytes_.find_first_not_of(" \t\r\n") != std::string_view::npos)
      throw Error(fmt::format("{}: only garbage was found in the patch input (no diff in it)", source_),
                  "a patch holds '--- a/FILE' / '+++ b/FILE' headers followed by '@@' hunks");
    reject_files_patched_twice(set);
    return set;
  }

 private:
  [[noreturn]] void fail(std::size_t index, const std::string& what) const {
    throw Error(fmt::format("{}:{}: {}", source_, index + 1, what),
                "fix or regenerate the patch (apexnpu make-patch writes well-formed patches)");
  }

  void check_header_line(std::size_t index) const {
    if (lines_[index].find('\0') != std::string_view::npos)
      fail(index, "a NUL byte in a header line");
  }

  FilePatch parse_git_file() {
    FilePatch file;
    file.patch_line = i_ + 1;
    check_header_line(i_);
    const std::string_view header = without_terminator(lines_[i_]).substr(11);
    // "a/X b/Y": the names are equal but for their prefixes in every diff git writes.
    const std::size_t split = header.find(" b/");
    if (split == std::string_view::npos) fail(i_, "cannot read the file names of a 'diff --git' line");
    const std::string git_old(header.substr(0, split));
    const std::string git_new(header.substr(split + 1));
    const std::size_t git_line = i_++;
    bool create = false, remove = false;
    std::string new_mode;
    while (i_ < lines_.size()) {
      const std::string_view line = without_terminator(lines_[i_]);
      if (starts_with(line, "--- ") && i_ + 1 < lines_.size() && starts_with(lines_[i_ + 1], "+++ ")) {
        parse_unified_file(file, &git_line);
        break;
      }
      check_header_line(i_);
      if (starts_with(line, "new file mode ")) {
        create = true;
        new_mode = line.substr(14);
      } else if (starts_with(line, "deleted file mode ")) {
        remove = true;
      } else if (starts_with(line, "new mode ")) {
        new_mode = line.substr(9);
        file.mode_changed = true;
      } else if (starts_with(line, "old mode ") || starts_with(line, "index ")) {
      } else if (starts_with(line, "similarity index ") || starts_with(line, "dissimilarity index ") ||
                 starts_with(line, "rename ") || starts_with(line, "copy ")) {
        fail(i_, "renamed and copied files are not supported; write them as a deletion and a new file");
      } else if (starts_with(line, "GIT binary patch") || starts_with(line, "Binary files ")) {
        fail(i_, "binary diffs are not supported");
      } else {
        break;
      }
      ++i_;
    }
    if (new_mode == "120000") fail(git_line, "the patch would create a symlink; patches never do");
    if (!new_mode.empty() && new_mode != "100644" && new_mode != "100755")
      fail(git_line, fmt::format("unsupported file mode {}", new_mode));
    file.executable = new_mode == "100755";
    if (create && remove) fail(git_line, "a file is both created and deleted");
    if (file.hunks.empty() && file.old_path.empty() && file.new_path.empty()) {
      // No '---'/'+++' lines: a mode change, or an empty file created or deleted.
      if (create) {
        file.operation = FileOperation::create;
        file.new_path = stripped(git_new, git_line);
      } else if (remove) {
        file.operation = FileOperation::remove;
        file.old_path = stripped(git_old, git_line);
      } else {
        file.old_path = stripped(git_old, git_line);
        file.new_path = stripped(git_new, git_line);
        if (!file.mode_changed) fail(git_line, "a 'diff --git' section with nothing to apply");
      }
    } else {
      if (create) file.operation = FileOperation::create;
      if (remove) file.operation = FileOperation::remove;
    }
    if (file.operation == FileOperation::create) file.old_path.clear();
    if (file.operation == FileOperation::remove) file.new_path.clear();
    return file;
  }

  HeaderName header_name(std::size_t index, std::size_t prefix_length) const {
    check_header_line(index);
    std::string_view text = without_terminator(lines_[index]).substr(prefix_length);
    HeaderName name;
    const std::size_t tab = text.find('\t');
    if (tab != std::string_view::npos) {
      const std::string_view stamp = text.substr(tab + 1);
      name.epoch = starts_with(stamp, "1970-01-01") || starts_with(stamp, "1969-12-31");
      text = text.substr(0, tab);
    }
    name.name = std::string(text);
    name.absent = name.name == "/dev/null";
    return name;
  }

  void parse_unified_file(FilePatch& file, const std::size_t* git_line) {
    const std::size_t header_line = i_;
    const HeaderName old_name = header_name(i_, 4);
    const HeaderName new_name = header_name(i_ + 1, 4);
    i_ += 2;
    while (i_ < lines_.size() && starts_with(lines_[i_], "@@ ")) file.hunks.push_back(parse_hunk());
    if (file.hunks.empty() && git_line == nullptr) fail(header_line, "a file header without hunks");

    const bool single_creation = file.hunks.size() == 1 && file.hunks[0].old_start == 0 &&
                                 file.hunks[0].old_count == 0;
    const bool single_removal = file.hunks.size() == 1 && file.hunks[0].new_start == 0 &&
                                file.hunks[0].new_count == 0;
    if (old_name.absent || (old_name.epoch && single_creation)) {
      file.operation = FileOperation::create;
      file.new_path = stripped(new_name.name, header_line + 1);
    } else if (new_name.absent || (new_name.epoch && single_removal)) {
      file.operation = FileOperation::remove;
      file.old_path = stripped(old_name.name, header_line);
    } else {
      file.old_path = stripped(old_name.name, header_line);
      file.new_path = stripped(new_name.name, header_line + 1);
      if (file.old_path != file.new_path)
        fail(header_line, fmt::format("the old and new names differ ({} and {}); renames are not supported",
                                      file.old_path, file.new_path));
    }
  }

  std::int64_t number(std::string_view& s, std::size_t index) const {
    if (s.empty() || s.front() < '0' || s.front() > '9') fail(index, "a malformed hunk header");
    std::int64_t value = 0;
    while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
      value = value * 10 + (s.front() - '0');
      if (value > max_hunk_number) fail(index, "a line number or count in the hunk header is too large");
      s.remove_prefix(1);
    }
    return value;
  }

  // "-a[,b] +c[,d] @@" after the leading "@@ "
  void parse_range(std::string_view& s, char sign, std::int64_t& start, std::int64_t& count) const {
    if (s.empty() || s.front() != sign) fail(i_, "a malformed hunk header");
    s.remove_prefix(1);
    start = number(s, i_);
    count = 1;
    if (!s.empty() && s.front() == ',') {
      s.remove_prefix(1);
      count = number(s, i_);
    }
  }

  Hunk parse_hunk() {
    check_header_line(i_);
    Hunk hunk;
    hunk.patch_line = i_ + 1;
    const std::string_view header = without_terminator(lines_[i_]);
    std::string_view s = header.substr(3);
    parse_range(s, '-', hunk.old_start, hunk.old_count);
    if (s.empty() || s.front() != ' ') fail(i_, "a malformed hunk header");
    s.remove_prefix(1);
    parse_range(s, '+', hunk.new_start, hunk.new_count);
    if (!starts_with(s, " @@")) fail(i_, "a malformed hunk header");
    hunk.header = std::string(header.substr(0, header.size() - s.size() + 3));
    const std::size_t header_index = i_++;

    // Every counted line takes at least one line of the patch.
    const auto remaining = static_cast<std::int64_t>(lines_.size() - i_);
    if (hunk.old_count > remaining || hunk.new_count > remaining)
      fail(header_index, fmt::format("the hunk counts {} old and {} new lines, but the patch has only "
                                     "{} lines left (truncated, or a bad line count)",
                                     hunk.old_count, hunk.new_count, remaining));
    std::int64_t old_seen = 0, new_seen = 0;
    while (old_seen < hunk.old_count || new_seen < hunk.new_count) {
      if (i_ >= lines_.size())
        fail(header_index, fmt::format("the hunk is truncated: the patch ends after {} of {} old and "
                                       "{} of {} new lines", old_seen, hunk.old_count, new_seen,
                                       hunk.new_count));
      const std::string_view line = lines_[i_];
      HunkLine parsed{LineKind::context, {}};
      if (line == "\n" || line == "\r\n") {
        parsed.text = std::string(line);  // an empty context line whose leading space was lost
      } else if (line[0] == ' ' || line[0] == '-' || line[0] == '+') {
        parsed.kind = static_cast<LineKind>(line[0]);
        parsed.text = std::string(line.substr(1));
      } else if (line[0] == '\\' && !hunk.lines.empty()) {
        strip_newline(hunk.lines.back());
        ++i_;
        continue;
      } else {
        fail(i_, fmt::format("line counts do not match the hunk header at line {} ({} old and {} new "
                             "lines announced, {} and {} found)",
                             header_index + 1, hunk.old_count, hunk.new_count, old_seen, new_seen));
      }
      if (parsed.kind != LineKind::added) ++old_seen;
      if (parsed.kind != LineKind::removed) ++new_seen;
      if (old_seen > hunk.old_count || new_seen > hunk.new_count)
        fail(i_, fmt::format("line counts do not match the hunk header at line {}", header_index + 1));
      hunk.lines.push_back(std::move(parsed));
      ++i_;
    }
    if (i_ < lines_.size() && starts_with(lines_[i_], "\\") && !hunk.lines.empty()) {
      strip_newline(hunk.lines.back());
      ++i_;
    }
    return hunk;
  }

  static void strip_newline(HunkLine& line) {
    if (ends_with_newline(line.text)) line.text.pop_back();
  }

  // patch -pN: drop N leading components; the rest must be a safe relative path.
  std::string stripped(const std::string& name, std::size_t index) const {
    if (name.find('\0') != std::string::npos) fail(index, "a NUL byte in a file name");
    std::size_t start = 0;
    for (int n = 0; n < strip_; ++n) {
      const std::size_t slash = name.find('/', start);
      if (slash == std::string::npos)
        fail(index, fmt::format("cannot strip {} leading component(s) from '{}'", strip_, name));
      start = slash + 1;
    }
    std::string path = name.substr(start);
    if (auto reason = unsafe_path_reason(path))
      fail(index, fmt::format("unsafe file name '{}': {}", path.size() > 200 ? path.substr(0, 200) + "..." : path,
                              *reason));
    return path;
  }

  void reject_files_patched_twice(const PatchSet& set) const {
    std::map<std::string, std::size_t> seen;
    for (const auto& file : set.files) {
      auto [it, fresh] = seen.emplace(file.target_path(), file.patch_line);
      if (!fresh)
        throw Error(fmt::format("{}:{}: {} is patched twice (first at line {})", source_, file.patch_line,
                                file.target_path(), it->second),
                    "merge the two diffs of the file into one");
    }
  }

  std::string_view bytes_;
  std::vector<std::string_view> lines_;
  std::string source_;
  int strip_;
  std::size_t i_ = 0;
};

}  // namespace

PatchSet parse_patch(std::string_view bytes, std::string_view source_name, int strip) {
  return Parser(bytes, source_name, strip).run();
}

}  // namespace apexnpu::patch
