// The patch parser: `diff -Nur` and `git diff` styles into the one PatchSet model. A file may
// have several sections (a concatenated series); the applier takes them in order.
#include <fmt/core.h>

#include "core/error.h"
#include "core/relative_path.h"
#include "patch/header_names.h"
#include "patch/hunk_parser.h"
#include "patch/lines.h"
#include "patch/patch_engine.h"
#include "patch/patch_lines.h"

namespace apexnpu::patch {

namespace {

class Parser {
 public:
  Parser(std::string_view bytes, std::string_view source_name, int strip)
      : bytes_(bytes), lines_(bytes, source_name), strip_(strip) {}

  PatchSet run() {
    PatchSet set;
    set.source_name = lines_.source();
    while (i_ < lines_.size()) {
      const std::string_view line = lines_[i_];
      if (line.starts_with("diff --git ")) {
        set.files.push_back(parse_git_file());
      } else if (starts_unified_header(i_)) {
        FilePatch file;
        file.patch_line = i_ + 1;
        parse_unified_file(file, nullptr);
        set.files.push_back(std::move(file));
      } else if (line.starts_with("Binary files ") || line.starts_with("GIT binary patch")) {
        lines_.fail(i_, "binary diffs are not supported");
      } else if (line.starts_with("@@ ")) {
        lines_.fail(i_, "a hunk without a file header (no '--- ' and '+++ ' lines before it)");
      } else {
        ++i_;  // text between diffs, as GNU patch allows: comments, "diff -Nur" lines, ...
      }
    }
    if (set.files.empty() && bytes_.find_first_not_of(" \t\r\n") != std::string_view::npos)
      throw Error(
          fmt::format("{}: only garbage was found in the patch input (no diff in it)", lines_.source()),
          "a patch holds '--- a/FILE' / '+++ b/FILE' headers followed by '@@' hunks");
    return set;
  }

 private:
  bool starts_unified_header(std::size_t index) const {
    return lines_[index].starts_with("--- ") && index + 1 < lines_.size() &&
           lines_[index + 1].starts_with("+++ ");
  }

  void check_header_line(std::size_t index) const {
    if (lines_[index].find('\0') != std::string_view::npos) lines_.fail(index, "a NUL byte in a header line");
  }

  // What the extended header lines of a "diff --git" section say.
  struct GitHeaders {
    bool create = false;
    bool remove = false;
    std::string new_mode;
  };

  FilePatch parse_git_file() {
    FilePatch file;
    file.patch_line = i_ + 1;
    check_header_line(i_);
    const std::size_t git_line = i_++;
    const GitHeaders headers = read_git_headers(file, git_line);
    check_git_mode(headers, git_line);
    file.executable = headers.new_mode == "100755";
    settle_git_operation(file, headers, git_line);
    if (file.operation == FileOperation::create) file.old_path.clear();
    if (file.operation == FileOperation::remove) file.new_path.clear();
    if (file.target_path().empty()) lines_.fail(git_line, "a 'diff --git' section without a file name");
    return file;
  }

  // The extended header lines up to the first that is not one, and the '---'/'+++' part that
  // may follow them.
  GitHeaders read_git_headers(FilePatch& file, std::size_t git_line) {
    GitHeaders headers;
    while (i_ < lines_.size()) {
      const std::string_view line = without_terminator(lines_[i_]);
      if (starts_unified_header(i_)) {
        parse_unified_file(file, &git_line);
        break;
      }
      check_header_line(i_);
      if (line.starts_with("new file mode ")) {
        headers.create = true;
        headers.new_mode = line.substr(14);
      } else if (line.starts_with("deleted file mode ")) {
        headers.remove = true;
      } else if (line.starts_with("new mode ")) {
        headers.new_mode = line.substr(9);
        file.mode_changed = true;
      } else if (line.starts_with("old mode ") || line.starts_with("index ")) {
      } else if (line.starts_with("similarity index ") || line.starts_with("dissimilarity index ") ||
                 line.starts_with("rename ") || line.starts_with("copy ")) {
        lines_.fail(i_,
                    "renamed and copied files are not supported; write them as a deletion and a new file");
      } else if (line.starts_with("GIT binary patch") || line.starts_with("Binary files ")) {
        lines_.fail(i_, "binary diffs are not supported");
      } else {
        break;
      }
      ++i_;
    }
    return headers;
  }

  void check_git_mode(const GitHeaders& headers, std::size_t git_line) const {
    if (headers.new_mode == "120000")
      lines_.fail(git_line, "the patch would create a symlink; patches never do");
    if (!headers.new_mode.empty() && headers.new_mode != "100644" && headers.new_mode != "100755")
      lines_.fail(git_line, fmt::format("unsupported file mode {}", headers.new_mode));
    if (headers.create && headers.remove) lines_.fail(git_line, "a file is both created and deleted");
  }

  // The file's operation and names from the extended headers and, when present, the
  // '---'/'+++' lines, which must agree with them.
  void settle_git_operation(FilePatch& file, const GitHeaders& headers, std::size_t git_line) const {
    const bool has_unified_header = !file.old_path.empty() || !file.new_path.empty();
    if (!has_unified_header) {
      // No '---'/'+++' lines: a mode change, or an empty file created or deleted.
      const auto [git_old, git_new] = git_names(git_line);
      if (headers.create) {
        file.operation = FileOperation::create;
        file.new_path = git_new;
      } else if (headers.remove) {
        file.operation = FileOperation::remove;
        file.old_path = git_old;
      } else {
        file.old_path = git_old;
        file.new_path = git_new;
        if (!file.mode_changed) lines_.fail(git_line, "a 'diff --git' section with nothing to apply");
      }
    } else if ((headers.create && file.operation == FileOperation::remove) ||
               (headers.remove && file.operation == FileOperation::create)) {
      lines_.fail(git_line,
                  "the 'diff --git' header and the '---'/'+++' lines disagree on whether the "
                  "file is created or deleted");
    } else {
      if (headers.create) file.operation = FileOperation::create;
      if (headers.remove) file.operation = FileOperation::remove;
    }
  }

  // The stripped names of a "diff --git" line, which must name one file.
  std::pair<std::string, std::string> git_names(std::size_t index) const {
    const auto names = read_git_names(without_terminator(lines_[index]).substr(11));
    if (!names)
      lines_.fail(index,
                  "cannot read the file names of a 'diff --git' line (a name with spaces must be "
                  "quoted, as git and GNU diff quote it)");
    std::pair<std::string, std::string> paths{stripped(names->first, index), stripped(names->second, index)};
    if (paths.first != paths.second)
      lines_.fail(index, fmt::format("the old and new names differ ({} and {}); renames are not supported",
                                     paths.first, paths.second));
    return paths;
  }

  HeaderName header_name(std::size_t index) const {
    check_header_line(index);
    const auto name = read_header_name(without_terminator(lines_[index]).substr(4));
    if (!name)
      lines_.fail(index,
                  "a malformed quoted file name (an unknown escape, a bad octal escape or no "
                  "closing quote)");
    return *name;
  }

  void parse_unified_file(FilePatch& file, const std::size_t* git_line) {
    const std::size_t header_line = i_;
    const HeaderName old_name = header_name(i_);
    const HeaderName new_name = header_name(i_ + 1);
    i_ += 2;
    while (i_ < lines_.size() && lines_[i_].starts_with("@@ ")) file.hunks.push_back(parse_hunk(lines_, i_));
    if (file.hunks.empty() && git_line == nullptr) lines_.fail(header_line, "a file header without hunks");

    const bool single_creation =
        file.hunks.size() == 1 && file.hunks[0].old_start == 0 && file.hunks[0].old_count == 0;
    const bool single_removal =
        file.hunks.size() == 1 && file.hunks[0].new_start == 0 && file.hunks[0].new_count == 0;
    if (old_name.absent && new_name.absent) lines_.fail(header_line, "both file names are /dev/null");
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
        lines_.fail(header_line,
                    fmt::format("the old and new names differ ({} and {}); renames are not supported",
                                file.old_path, file.new_path));
    }
  }

  // patch -pN: drop N leading components; the rest must be a safe relative path.
  std::string stripped(const std::string& name, std::size_t index) const {
    if (name.find('\0') != std::string::npos) lines_.fail(index, "a NUL byte in a file name");
    std::size_t start = 0;
    for (int n = 0; n < strip_; ++n) {
      const std::size_t slash = name.find('/', start);
      if (slash == std::string::npos)
        lines_.fail(index, fmt::format("cannot strip {} leading component(s) from '{}'", strip_, name));
      start = slash + 1;
    }
    std::string path = name.substr(start);
    if (auto reason = unsafe_path_reason(path))
      lines_.fail(index, fmt::format("unsafe file name '{}': {}",
                                     path.size() > 200 ? path.substr(0, 200) + "..." : path, *reason));
    return path;
  }

  std::string_view bytes_;
  PatchLines lines_;
  int strip_;
  std::size_t i_ = 0;
};

}  // namespace

PatchSet parse_patch(std::string_view bytes, std::string_view source_name, int strip) {
  return Parser(bytes, source_name, strip).run();
}

}  // namespace apexnpu::patch
