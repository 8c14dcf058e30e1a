#pragma once
// One model of a unified diff, shared by the parser, the applier and the writer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace apexnpu::patch {

enum class LineKind : char { context = ' ', removed = '-', added = '+' };

struct HunkLine {
  LineKind kind;
  // The line's bytes including its terminator ("\n", or "\r\n" kept as is). Empty terminator
  // when the patch says "\ No newline at end of file" for this line.
  std::string text;
};

struct Hunk {
  std::int64_t old_start = 0, old_count = 0;  // as written in "@@ -a,b +c,d @@"
  std::int64_t new_start = 0, new_count = 0;
  std::string header;          // the "@@ ... @@" line as written, without its terminator
  std::size_t patch_line = 0;  // 1-based line of the header in the patch file
  std::vector<HunkLine> lines;
};

enum class FileOperation { modify, create, remove };

struct FilePatch {
  std::string old_path;  // after -p stripping; empty for a created file
  std::string new_path;  // after -p stripping; empty for a removed file
  FileOperation operation = FileOperation::modify;
  bool executable = false;     // git "new file mode 100755" / "new mode 100755"
  bool mode_changed = false;   // git "old mode"/"new mode" pair present
  std::size_t patch_line = 0;  // 1-based line of this file's first header line
  std::vector<Hunk> hunks;

  // The path the file has in the result (new_path, or old_path for a removal).
  const std::string& target_path() const { return new_path.empty() ? old_path : new_path; }
};

struct PatchSet {
  std::string source_name;  // for messages: the patch file's name
  std::vector<FilePatch> files;
};

}  // namespace apexnpu::patch
