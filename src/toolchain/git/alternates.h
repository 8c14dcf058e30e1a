#pragma once
// The object directories a repository borrows from (objects/info/alternates), followed as deep
// as git follows them, each once: a file that names the same directory many times, or
// alternates that name each other, cost one visit each instead of a search that multiplies.
#include <filesystem>
#include <vector>

namespace apexnpu::git {

// The alternates of `objects_dir` and theirs (depth first, in file order), without duplicates
// or `objects_dir` itself; each path made canonical. Lines may be absolute or relative to the
// directory whose file names them; # starts a comment.
std::vector<std::filesystem::path> alternate_object_dirs(const std::filesystem::path& objects_dir);

}  // namespace apexnpu::git
