#include "git/repository_dirs.h"

#include <algorithm>
#include <string_view>

#include "fs/file_io.h"
#include "git/libgit2.h"

namespace apexnpu::git {
namespace stdfs = std::filesystem;

namespace {

constexpr int kAlternatesDepth = 5;  // as deep as git itself follows alternates

void add_unique(std::vector<stdfs::path>& dirs, const stdfs::path& dir) {
  std::error_code ec;
  stdfs::path normal = stdfs::weakly_canonical(dir, ec);
  if (ec) normal = dir.lexically_normal();
  if (std::find(dirs.begin(), dirs.end(), normal) == dirs.end()) dirs.push_back(std::move(normal));
}

// objects/info/alternates: one object directory a line, relative to `objects`; # comments.
void add_alternates(std::vector<stdfs::path>& dirs, const stdfs::path& objects, int depth) {
  if (depth > kAlternatesDepth) return;
  const auto text = try_read_file(objects / "info" / "alternates");
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::size_t end = std::min(rest.find('\n'), rest.size());
    const std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    if (line.empty() || line.front() == '#') continue;
    const stdfs::path alternate = stdfs::path(line).is_absolute() ? stdfs::path(line) : objects / line;
    const std::size_t before = dirs.size();
    add_unique(dirs, alternate);
    if (dirs.size() > before) add_alternates(dirs, alternate, depth + 1);
  }
}

}  // namespace

std::vector<stdfs::path> repository_dirs(const stdfs::path& repository) {
  std::vector<stdfs::path> dirs;
  add_unique(dirs, repository);
  git_repository* raw = nullptr;
  if (libgit2().git_repository_open_ext(&raw, repository.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH,
                                        nullptr) != 0)
    return dirs;
  const Repository repo(raw);
  if (const char* workdir = libgit2().git_repository_workdir(repo.get())) add_unique(dirs, workdir);
  add_unique(dirs, libgit2().git_repository_path(repo.get()));
  const stdfs::path common = libgit2().git_repository_commondir(repo.get());
  add_unique(dirs, common);
  add_alternates(dirs, common / "objects", 1);
  return dirs;
}

}  // namespace apexnpu::git
