#include "fs/output_guard.h"

#include <fmt/core.h>

#include <algorithm>
#include <system_error>

#include "core/error.h"

namespace apexnpu::fs {
namespace stdfs = std::filesystem;

namespace {

// The path with every symlink of its existing part resolved; the rest normalised.
stdfs::path resolved(const stdfs::path& path) {
  std::error_code ec;
  stdfs::path absolute = stdfs::absolute(path, ec);
  if (ec) absolute = path;
  stdfs::path canonical = stdfs::weakly_canonical(absolute, ec);
  if (ec) canonical = absolute.lexically_normal();
  // "dir/" and "dir" are the same directory.
  if (!canonical.has_filename() && canonical.has_relative_path()) canonical = canonical.parent_path();
  return canonical;
}

// Whether `inner` is `outer` or lies below it, component by component.
bool is_within(const stdfs::path& inner, const stdfs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i)
    if (i == inner.end() || *i != *o) return false;
  return true;
}

}  // namespace

void refuse_output_over_inputs(const stdfs::path& output, std::string_view option,
                               const std::vector<ReadPath>& inputs) {
  const stdfs::path out = resolved(output);
  for (const ReadPath& input : inputs) {
    if (input.path.empty()) continue;
    const stdfs::path in = resolved(input.path);
    const bool inside = is_within(out, in);
    const bool holds = is_within(in, out);
    if (!inside && !holds) continue;
    const std::string where = out == in ? "is" : inside ? "lies inside" : "contains";
    throw UsageError(
        fmt::format("{} {} {} {} {}{}, which this command reads", option, output.string(), where, input.role,
                    input.path.string(),
                    out == in || input.path == in ? "" : fmt::format(" ({})", in.string())),
        fmt::format("choose an {} outside {}: writing there would change what is read", option, input.role));
  }
}

}  // namespace apexnpu::fs
