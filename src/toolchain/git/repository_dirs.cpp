#include "git/repository_dirs.h"

#include <algorithm>

#include "git/alternates.h"
#include "git/libgit2.h"

namespace apexnpu::git {
namespace stdfs = std::filesystem;

namespace {

void add_unique(std::vector<stdfs::path>& dirs, const stdfs::path& dir) {
  std::error_code ec;
  stdfs::path normal = stdfs::weakly_canonical(dir, ec);
  if (ec) normal = dir.lexically_normal();
  if (std::find(dirs.begin(), dirs.end(), normal) == dirs.end()) dirs.push_back(std::move(normal));
}

}  // namespace

std::vector<stdfs::path> repository_dirs(const stdfs::path& repository) {
  std::vector<stdfs::path> dirs;
  add_unique(dirs, repository);
  git_repository* raw = nullptr;
  if (libgit2().git_repository_open_ext(&raw, repository.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) !=
      0)
    return dirs;
  const Repository repo(raw);
  if (const char* workdir = libgit2().git_repository_workdir(repo.get())) add_unique(dirs, workdir);
  add_unique(dirs, libgit2().git_repository_path(repo.get()));
  const stdfs::path common = libgit2().git_repository_commondir(repo.get());
  add_unique(dirs, common);
  for (const auto& alternate : alternate_object_dirs(common / "objects")) add_unique(dirs, alternate);
  return dirs;
}

}  // namespace apexnpu::git
