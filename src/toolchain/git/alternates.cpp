#include "git/alternates.h"

#include <algorithm>
#include <string_view>

#include "fs/file_io.h"

namespace apexnpu::git {
namespace stdfs = std::filesystem;

namespace {

constexpr int kDeepest = 5;  // as git: the alternates files of five levels of alternates are read

stdfs::path canonical_or_normal(const stdfs::path& dir) {
  std::error_code ec;
  stdfs::path canonical = stdfs::weakly_canonical(dir, ec);
  return ec ? dir.lexically_normal() : canonical;
}

// `objects_dir` by value: it may be an element of `seen`, which grows here.
void follow(const stdfs::path objects_dir, int depth, std::vector<stdfs::path>& seen,
            std::vector<stdfs::path>& out) {
  if (depth > kDeepest) return;
  const auto text = try_read_file(objects_dir / "info" / "alternates");
  if (!text) return;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::size_t end = std::min(rest.find('\n'), rest.size());
    std::string_view line = rest.substr(0, end);
    rest.remove_prefix(std::min(end + 1, rest.size()));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    const stdfs::path named(line);
    stdfs::path dir = canonical_or_normal(named.is_absolute() ? named : objects_dir / named);
    if (std::find(seen.begin(), seen.end(), dir) != seen.end()) continue;
    seen.push_back(dir);
    out.push_back(dir);
    follow(dir, depth + 1, seen, out);
  }
}

}  // namespace

std::vector<stdfs::path> alternate_object_dirs(const stdfs::path& objects_dir) {
  std::vector<stdfs::path> seen{canonical_or_normal(objects_dir)};
  std::vector<stdfs::path> out;
  follow(seen.front(), 0, seen, out);
  return out;
}

}  // namespace apexnpu::git
