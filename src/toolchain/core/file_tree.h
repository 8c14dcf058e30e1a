#pragma once
// An in-memory snapshot of a source tree: what git reads, what the patch engine transforms,
// what gen writes and make-patch compares. Paths are relative, '/'-separated, never empty,
// never absolute, never containing "." or ".." components.
#include <map>
#include <string>

namespace apexnpu {

enum class FileKind { regular, executable, symlink };

struct FileEntry {
  std::string content;  // bytes exactly as stored (CRLF kept); for a symlink, its target
  FileKind kind = FileKind::regular;
  friend bool operator==(const FileEntry&, const FileEntry&) = default;
};

// Sorted by path (std::map orders bytewise), which makes every walk deterministic.
using FileTree = std::map<std::string, FileEntry>;

}  // namespace apexnpu
