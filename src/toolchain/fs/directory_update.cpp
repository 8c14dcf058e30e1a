#include "fs/directory_update.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>

#include "core/error.h"
#include "fs/file_io.h"
#include "fs/parent_dir.h"
#include "fs/unique_fd.h"

namespace apexnpu::fs {
namespace stdfs = std::filesystem;

namespace {

constexpr const char* kJournal = "journal";  // the entries of a committed update, one a line

// An exclusive lock on a directory, for as long as this lives: commits and their recovery in
// one parent directory take turns.
class DirectoryLock {
 public:
  explicit DirectoryLock(const stdfs::path& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_)
      while (::flock(fd_.get(), LOCK_EX) != 0 && errno == EINTR) {
      }
  }

 private:
  UniqueFd fd_;
};

std::vector<std::string> journal_entries(const stdfs::path& staging) {
  std::vector<std::string> names;
  const auto text = try_read_file(staging / kJournal);
  if (!text) return names;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::size_t end = std::min(rest.find('\n'), rest.size());
    if (end > 0) names.emplace_back(rest.substr(0, end));
    rest.remove_prefix(std::min(end + 1, rest.size()));
  }
  return names;
}

// A journal line "/<name>" drops the entry: no name of a directory holds a '/'.
std::string_view dropped_name(std::string_view line) {
  return line.starts_with('/') ? line.substr(1) : std::string_view();
}

// Moves each journalled entry still waiting in the staging into `dir`, the old one aside first
// (a dropped entry only goes aside). Run by the commit, and again by whoever finds the commit
// killed half-way: each step checks what is done, so running it twice does no harm. A rename the
// file system refuses stops it and is returned, said: both callers undo the journal then, so
// it is a value rather than an exception they would catch at once.
[[nodiscard]] std::optional<std::string> apply_journal(const stdfs::path& staging, const stdfs::path& dir,
                                                       const std::vector<std::string>& lines) {
  std::error_code ec;
  for (const std::string& line : lines) {
    const std::string_view dropped = dropped_name(line);
    const std::string name(dropped.empty() ? std::string_view(line) : dropped);
    const stdfs::path waiting = staging / "new" / name;
    if (dropped.empty() && !stdfs::exists(stdfs::symlink_status(waiting, ec))) continue;  // moved in already
    const stdfs::path target = dir / name;
    if (stdfs::exists(stdfs::symlink_status(target, ec))) {
      stdfs::create_directories(staging / "old", ec);
      stdfs::path aside = staging / "old" / name;
      for (int n = 1; stdfs::exists(stdfs::symlink_status(aside, ec)); ++n)
        aside = staging / "old" / fmt::format("{}.{}", name, n);
      if (::rename(target.c_str(), aside.c_str()) != 0)
        return fmt::format("cannot move the old {} aside: {}", target.string(), std::strerror(errno));
    }
    if (!dropped.empty()) continue;
    if (::rename(waiting.c_str(), target.c_str()) != 0)
      return fmt::format("cannot move {} into {}: {}", name, dir.string(), std::strerror(errno));
  }
  return std::nullopt;
}

// The reverse of apply_journal, for an update that cannot be finished: each entry moved in goes
// back into the staging and each old one back in place, last first. Returns what failed when a
// rename does (the directory is then part old, part new, as the journal still says).
[[nodiscard]] std::optional<std::string> undo_journal(const stdfs::path& staging, const stdfs::path& dir,
                                                      const std::vector<std::string>& lines) {
  std::error_code ec;
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    const std::string_view dropped = dropped_name(*line);
    const std::string name(dropped.empty() ? std::string_view(*line) : dropped);
    const stdfs::path waiting = staging / "new" / name, target = dir / name, aside = staging / "old" / name;
    const bool moved_in = dropped.empty() && !stdfs::exists(stdfs::symlink_status(waiting, ec));
    if (moved_in && stdfs::exists(stdfs::symlink_status(target, ec)) &&
        ::rename(target.c_str(), waiting.c_str()) != 0)
      return fmt::format("cannot take {} out of {} again: {}", name, dir.string(), std::strerror(errno));
    if (stdfs::exists(stdfs::symlink_status(aside, ec)) &&
        !stdfs::exists(stdfs::symlink_status(target, ec)) && ::rename(aside.c_str(), target.c_str()) != 0)
      return fmt::format("cannot put the old {} back: {}", target.string(), std::strerror(errno));
  }
  return std::nullopt;
}

}  // namespace

DirectoryUpdate::DirectoryUpdate(const stdfs::path& dir) {
  std::error_code ec;
  dir_ = stdfs::absolute(dir, ec).lexically_normal();
  if (!dir_.has_filename() && dir_.has_relative_path()) dir_ = dir_.parent_path();
  const auto status = stdfs::symlink_status(dir_, ec);
  if (!ec && stdfs::exists(status) && !stdfs::is_directory(status))
    throw Error(fmt::format("{} exists and is not a directory", dir.string()),
                "choose another output directory");
  const stdfs::path parent = parent_of(dir_);
  for (stdfs::path p = parent; !p.empty() && !stdfs::exists(p, ec); p = p.parent_path()) {
    created_ancestor_ = p;
    if (p == p.parent_path()) break;
  }
  stdfs::create_directories(parent, ec);
  if (ec)
    throw Error(fmt::format("cannot create {}: {}", parent.string(), ec.message()),
                "choose an output directory you can write");
  remove_stale_staging(dir_);
  try {
    staging_ = std::make_unique<StagingDir>(dir_);
    stdfs::create_directory(staging_->path() / "new");
    stdfs::create_directory(staging_->path() / "scratch");
    if (stdfs::exists(dir_, ec) && ::access(dir_.c_str(), W_OK) != 0)
      throw Error(fmt::format("cannot write into {}: {}", dir.string(), std::strerror(errno)),
                  "choose an output directory you can write");
  } catch (...) {  // undoes what this constructor made, then lets the failure go on to main
    staging_.reset();
    if (!created_ancestor_.empty()) stdfs::remove_all(created_ancestor_, ec);
    throw;
  }
}

DirectoryUpdate::~DirectoryUpdate() {
  if (committed_) return;
  staging_.reset();  // first: it lives inside what this update may have created
  std::error_code ec;
  if (!created_ancestor_.empty()) stdfs::remove_all(created_ancestor_, ec);
}

stdfs::path DirectoryUpdate::staged(const std::string& name) const { return staging_->path() / "new" / name; }
stdfs::path DirectoryUpdate::scratch() const { return staging_->path() / "scratch"; }

std::vector<stdfs::path> DirectoryUpdate::commit(const std::vector<std::string>& names,
                                                 const std::vector<std::string>& drops) {
  if (committed_) throw Error(fmt::format("{} was already updated", dir_.string()));
  std::vector<stdfs::path> final_paths;
  for (const auto& name : names) final_paths.push_back(dir_ / name);
  const stdfs::path& staging = staging_->path();
  const DirectoryLock lock(parent_of(dir_));
  std::error_code ec;
  stdfs::remove_all(scratch(), ec);
  if (!stdfs::exists(stdfs::symlink_status(dir_, ec))) {
    // Nothing there yet: one rename makes the whole directory appear at once.
    if (::rename((staging / "new").c_str(), dir_.c_str()) != 0)
      throw Error(fmt::format("cannot move the output into {}: {}", dir_.string(), std::strerror(errno)),
                  "check that its parent directory is writable");
  } else {
    std::vector<std::string> lines = names;
    for (const auto& name : drops) lines.push_back("/" + name);
    std::string journal;
    for (const auto& line : lines) journal += line + "\n";
    write_file_atomic(staging / kJournal, journal, kFileMode, Durability::renamed);
    if (const auto failed = apply_journal(staging, dir_, lines)) {
      // This run knows why: it undoes what it did, so a failed attempt leaves nothing behind.
      // Only when that fails too is the staging left, journal and all, for the next run.
      committed_ = true;
      if (const auto stuck = undo_journal(staging, dir_, lines)) {
        staging_->release();
        throw Error(fmt::format("{}; and {}", *failed, *stuck),
                    fmt::format("check that {} is writable; the next run into it tries again to finish "
                                "this update, and undoes it where it cannot",
                                dir_.string()));
      }
      staging_.reset();
      throw Error(*failed, fmt::format("check that {} is writable; it was left as it was", dir_.string()));
    }
  }
  committed_ = true;
  staging_.reset();  // removes what was moved aside, and the journal
  return final_paths;
}

stdfs::path committed_entry(const stdfs::path& entry) {
  std::error_code ec;
  const stdfs::path absolute = stdfs::absolute(entry, ec).lexically_normal();
  const stdfs::path dir = parent_of(absolute);
  const std::string name = absolute.filename().string();
  const std::string prefix = staging_prefix(dir) + "staging-";
  for (const stdfs::path& home : {parent_of(dir), dir})  // inside: dir is a mount point
    for (stdfs::directory_iterator it(home, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->path().filename().string().starts_with(prefix)) continue;
      const std::vector<std::string> names = journal_entries(it->path());
      if (std::find(names.begin(), names.end(), name) == names.end()) continue;
      const stdfs::path waiting = it->path() / "new" / name;
      if (stdfs::exists(stdfs::symlink_status(waiting, ec))) return waiting;
    }
  return entry;
}

void finish_committed_updates(const stdfs::path& dir,
                              const std::vector<std::pair<stdfs::path, StagingKind>>& stale) {
  std::vector<std::pair<stdfs::file_time_type, stdfs::path>> committed;
  std::error_code ec;
  for (const auto& [path, kind] : stale) {
    if (kind != StagingKind::staging) continue;
    const auto when = stdfs::last_write_time(path / kJournal, ec);
    if (!ec) committed.emplace_back(when, path);
  }
  std::sort(committed.begin(), committed.end());
  const DirectoryLock lock(parent_of(dir));
  for (const auto& [when, staging] : committed) {
    const std::vector<std::string> lines = journal_entries(staging);
    // It cannot be finished (the file system refuses a rename): what it had moved is put back, so
    // that removing it loses nothing that was in place. What the undo cannot move either is left
    // to remove_stale_staging, the caller, as it finds it.
    if (apply_journal(staging, dir, lines)) (void)undo_journal(staging, dir, lines);
  }
}

}  // namespace apexnpu::fs
