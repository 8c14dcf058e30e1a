#pragma once
// The patch engine's entry points. All pure: bytes and trees in, values out; nothing touches
// the file system. Errors in the patch text throw apexnpu::Error naming the patch line.
#include <string>
#include <string_view>
#include <vector>

#include "core/file_tree.h"
#include "patch/patch_model.h"

namespace apexnpu::patch {

// Parses `diff -Nur` and `git diff` style patches. `strip` is patch's -p level. C-quoted names are
// decoded as git writes them, then every stripped path is validated (not absolute, not empty,
// no "." / ".." / ".git" component, no NUL), and every hunk's counts before sizing anything from
// them. Hunks GNU patch calls malformed are errors: a body that does not match the counts, a
// "\ No newline" marker inside a hunk, a hunk that changes nothing. A file may have several
// sections (a concatenated series), kept in order. An empty patch gives an empty PatchSet; a
// non-empty one with no diff in it is an error ("only garbage was found").
PatchSet parse_patch(std::string_view bytes, std::string_view source_name, int strip = 1);

enum class FileStatus { clean, offset, fuzz, failed };
std::string_view to_string(FileStatus);
std::string_view to_string(FileOperation);  // "modify", "create", "remove"

struct HunkReport {
  std::string header;  // "@@ -a,b +c,d @@"
  std::size_t patch_line = 0;
  FileStatus status = FileStatus::clean;
  std::int64_t offset = 0;  // lines between where the hunk said and where it applied
  int fuzz = 0;             // context lines dropped (0..2)
  std::string reason;       // why it failed, when it did
};

struct FileReport {
  std::string path;
  FileOperation operation = FileOperation::modify;
  FileStatus status = FileStatus::clean;  // the worst of its hunks
  std::vector<HunkReport> hunks;
  std::string rejects;  // this file's failed hunks, as GNU's <file>.rej
};

struct ApplyResult {
  // The input with every file patch applied. When some hunks failed, it is what GNU patch
  // leaves: each modified file with the hunks that did apply (see FileReport::rejects).
  FileTree tree;
  std::vector<FileReport> files;  // one per file patch, in patch order
  bool ok = true;                 // false when any hunk or file operation failed
  std::string rejects;            // a .rej-style report of every failed hunk (empty when ok)
};

// Applies the patch to the tree with GNU `patch` semantics (exact, then nearest offset, then
// fuzz 1 and 2; a hunk that would land before an earlier hunk's changes fails as misordered).
// Sections are applied in order, each to the result of the ones before (a file created, then
// modified, then deleted). On any failure `ok` is false; callers that are all or nothing must then not use
// `tree` (gen writes nothing), and a porting workflow may (gen --keep-rejects).
// Refuses to write through a symlink in the tree or to create one. Takes the tree by value:
// a caller done with its tree moves it in, and no file is copied.
ApplyResult apply_patch(const PatchSet& patch, FileTree input);

// Renders the difference between two trees as a deterministic patch (deletions first, then the
// other paths, each sorted; no timestamps; 3 lines of context; names C-quoted where needed) that
// GNU `patch -p1` and `git apply` both accept.
// Only the paths in `paths` are diffed (each present in one or both trees).
std::string write_patch(const FileTree& old_tree, const FileTree& new_tree,
                        const std::vector<std::string>& paths);

// write_patch in parts, for callers that fetch the files themselves: the order of its sections
// (`paths` sorted and deduplicated, those missing from the new tree first), and one path's
// section (empty when nothing differs; `before` or `after` null when the file is absent there).
// The sections of section_order's paths, joined, are write_patch's output.
std::vector<std::string> section_order(const FileTree& new_tree, const std::vector<std::string>& paths);
std::string write_section(const std::string& path, const FileEntry* before, const FileEntry* after);

}  // namespace apexnpu::patch
