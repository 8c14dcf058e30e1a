#pragma once
// Every directory a read of a repository may use, so that a command can refuse to write into
// (or replace) any of them.
#include <filesystem>
#include <vector>

namespace apexnpu::git {

// The repository's work tree (if it has one), its git directory, the common directory a linked
// worktree shares with its main repository, and the object directories its alternates name (and
// theirs, as deep as git follows them); the path itself when libgit2 cannot open it.
std::vector<std::filesystem::path> repository_dirs(const std::filesystem::path& repository);

}  // namespace apexnpu::git
