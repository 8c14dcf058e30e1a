#pragma once
// The one rule for paths inside a tree: relative, '/'-separated, no empty, "." or ".."
// component, no component git refuses (".git" as any file system reads it:
// core/git_path_rules.h), no NUL, bounded depth and length. Used by the patch parser,
// the tree writer and everything else that turns a name into a file.
#include <optional>
#include <string>
#include <string_view>

namespace apexnpu {

inline constexpr std::size_t max_path_components = 256;
inline constexpr std::size_t max_path_bytes = 4096;

// Why `path` is not a safe relative path, or nothing when it is.
std::optional<std::string> unsafe_path_reason(std::string_view path);

}  // namespace apexnpu
