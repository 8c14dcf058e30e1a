#include "commands/build_output.h"

#include <fmt/core.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/error.h"

namespace apexnpu::commands {
namespace fs = std::filesystem;

namespace {
// Staging folders of builds that were killed (SIGKILL, Ctrl-C) are named
// ".<out>.apexnpu-staging-<pid>-..." beside -o; remove those whose process is gone.
void remove_stale_staging(const fs::path& parent, const std::string& out_name) {
  const std::string prefix = "." + out_name + ".apexnpu-staging-";
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    if (pid <= 0 || (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

Error unwritable(const fs::path& out, const std::string& why) {
  return Error(fmt::format("-o {}: cannot write the output directory ({})", out.string(), why),
               "pass -o with a writable directory");
}
}  // namespace

BuildOutput::BuildOutput(const fs::path& out_dir) {
  std::error_code ec;
  out_ = fs::absolute(out_dir, ec).lexically_normal();
  if (out_.has_filename() == false) out_ = out_.parent_path();
  if (fs::exists(out_, ec) && !fs::is_directory(out_, ec))
    throw unwritable(out_dir, "it exists and is not a directory");
  const fs::path parent = out_.parent_path();
  for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    created_ancestor_ = p;
    if (p == p.parent_path()) break;
  }
  fs::create_directories(parent, ec);
  if (ec) {
    created_ancestor_.clear();
    throw unwritable(out_dir, ec.message());
  }
  remove_stale_staging(parent, out_.filename().string());
  const fs::path staging = parent / fmt::format(".{}.apexnpu-staging-{}", out_.filename().string(),
                                                unique_suffix());
  if (!fs::create_directory(staging, ec) || ec) {
    std::string why = ec ? ec.message() : "already exists";
    if (!created_ancestor_.empty()) fs::remove_all(created_ancestor_, ec);
    created_ancestor_.clear();
    throw unwritable(out_dir, why);
  }
  staging_ = TempDir(staging);
  fs::create_directory(staging / "out", ec);
  fs::create_directory(staging / "scratch", ec);
  fs::create_directory(staging / "replaced", ec);
  if (fs::exists(out_, ec) && ::access(out_.c_str(), W_OK) != 0)
    throw unwritable(out_dir, std::strerror(errno));
}

BuildOutput::~BuildOutput() {
  if (committed_ || created_ancestor_.empty()) return;
  std::error_code ec;
  staging_ = TempDir();  // remove the staging folder first: it lives inside created_ancestor_
  fs::remove_all(created_ancestor_, ec);
}

fs::path BuildOutput::staged(const std::string& name) const { return staging_.path() / "out" / name; }
fs::path BuildOutput::scratch() const { return staging_.path() / "scratch"; }

std::vector<fs::path> BuildOutput::commit(const std::vector<std::string>& names) {
  std::error_code ec;
  std::vector<fs::path> final_paths;
  for (const auto& n : names) final_paths.push_back(out_ / n);
  if (!fs::exists(out_, ec)) {
    // Nothing there yet: one rename makes the whole -o appear at once.
    std::error_code ignored;
    fs::remove_all(scratch(), ignored);
    fs::rename(staging_.path() / "out", out_, ec);
    if (ec) throw unwritable(out_, ec.message());
  } else {
    for (const auto& n : names) {
      const fs::path target = out_ / n;
      if (fs::exists(fs::symlink_status(target, ec))) {
        fs::rename(target, staging_.path() / "replaced" / n, ec);
        if (ec) throw unwritable(out_, fmt::format("cannot replace {}: {}", target.string(), ec.message()));
      }
      fs::rename(staged(n), target, ec);
      if (ec) throw unwritable(out_, fmt::format("cannot move {} into place: {}", n, ec.message()));
    }
  }
  committed_ = true;
  return final_paths;
}

}  // namespace apexnpu::commands
