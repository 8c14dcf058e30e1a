#pragma once
// The fuzzers' text form of small trees, easy to seed and to mutate: "=== NAME" lines, each
// followed by its file's bytes up to the newline before the next "=== " line. NAME may be
// C-quoted (for newlines and other bytes); a leading '*' makes the file executable, '@' a
// symlink whose target is the content. Trees and patches are separated by a "%%%%" line.
#include <string_view>
#include <utility>

#include "core/file_tree.h"

namespace apexnpu::fuzz {

// The text before the first "\n%%%%\n" and the text after it (all and nothing without one).
std::pair<std::string_view, std::string_view> split_at_separator(std::string_view text);

// The tree the text describes, keeping only what a real tree can hold: safe relative paths, no
// path both a file and a directory, symlinks only when `allow_symlinks`.
FileTree read_tree_text(std::string_view text, bool allow_symlinks);

}  // namespace apexnpu::fuzz
