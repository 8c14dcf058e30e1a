#pragma once
// File names as GNU patch 2.7 reads them from "--- " / "+++ " lines and from "diff --git" lines,
// C-quoted or not. Decoding only: -p stripping and the safety checks come after.
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace apexnpu::patch {

struct HeaderName {
  std::string name;     // decoded, timestamp removed
  bool absent = false;  // /dev/null
  bool epoch = false;   // diff -N's timestamp for a missing file
};

// The name after "--- " or "+++ ". Leading blanks are skipped; a quoted name ends at its closing
// quote; an unquoted one at a tab when the line has one (a timestamp or git's marker follows),
// else at the first white space. Nothing when a quoted name is malformed.
std::optional<HeaderName> read_header_name(std::string_view text);

// The two names after "diff --git ": each quoted, or unquoted without spaces. Nothing when the
// line is not two such names (GNU patch cannot read "a/x y b/x y" either).
std::optional<std::pair<std::string, std::string>> read_git_names(std::string_view text);

}  // namespace apexnpu::patch
