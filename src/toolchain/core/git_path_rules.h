#pragma once
// Git's own rules for the names it checks out (its verify_path), which every name apexnpu
// writes into a tree obeys too: a tree gen writes is checked into git, copied onto Windows and
// macOS disks, and packed into wheels. A component that any of those file systems reads as
// ".git" (in any case; with NTFS's trailing dots and spaces or its 8.3 short name "git~1"; with
// the code points HFS+ ignores) would put files into a repository's own metadata; a symlink
// spelled ".gitmodules" would make git read submodule settings through a link. Names with
// control characters (a newline above all) are refused where a tree is written or read
// (control_character_reason): Windows refuses them and terminals mis-show them. The patch parser
// still decodes them as GNU patch does; gen then refuses to write them.
#include <optional>
#include <string>
#include <string_view>

namespace apexnpu {

// Why git would refuse `component` (one name, without '/') anywhere in a path, or nothing.
std::optional<std::string> git_component_reason(std::string_view component);

// Why a name in `path` holds a control character (byte < 0x20 or 0x7f), or nothing.
std::optional<std::string> control_character_reason(std::string_view path);

// Why git would refuse a symlink whose path ends in `name` (its last component), or nothing.
std::optional<std::string> git_symlink_reason(std::string_view name);

// `path` as a message shows it: quoted with C escapes when it holds a control character (a
// newline in a name would otherwise break the message's line), else as it is.
std::string printable_path(std::string_view path);

}  // namespace apexnpu
