#pragma once
// Whole-file reads and writes, the one implementation every layer uses. Reads refuse symlinks
// and anything but a regular file; writes go to a temporary file beside the target, are synced
// and renamed into place (then the directory is synced), so a reader never sees half a file and
// a crash leaves the old file or the new one (unless the caller waives the syncs).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace apexnpu {

// Whether a read may go through a symlink. Trees and outputs never do (a link inside them is
// data, not a way out); the object cache hashes the headers a compiler read, links and all.
enum class Links { refuse, follow };

// Reads a whole regular file; throws Error naming it (and refusing a symlink).
std::string read_file(const std::filesystem::path& path);
// The same, or nullopt when nothing is there: the path does not exist (ENOENT) or goes through
// something that is not a directory (ENOTDIR). Every other failure (a symlink where links are
// refused, a directory, no permission, an I/O error) throws as read_file does: a file that is
// there but cannot be read is never taken for an absent one.
std::optional<std::string> try_read_file(const std::filesystem::path& path, Links links = Links::refuse);

inline constexpr std::filesystem::perms kFileMode =
    std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
    std::filesystem::perms::group_read | std::filesystem::perms::others_read;  // 0644

// Whether write_file_atomic waits until the file and its directory entry are on disk (fsync),
// or only makes the new file appear whole through the rename, as a file git checks out does.
enum class Durability { synced, renamed };

// Replaces `path` with `bytes` atomically, with mode `perms` (not subject to the umask).
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes,
                       std::filesystem::perms perms = kFileMode, Durability durability = Durability::synced);

// A name no other process or thread will pick: pid, thread and a counter.
std::string unique_suffix();

// A directory removed (recursively, never following links) when this goes out of scope, unless
// released.
class TempDir {
 public:
  TempDir() = default;
  explicit TempDir(std::filesystem::path path) : path_(std::move(path)) {}
  TempDir(TempDir&& o) noexcept : path_(std::exchange(o.path_, {})) {}
  TempDir& operator=(TempDir&& o) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  void release() { path_.clear(); }

 private:
  std::filesystem::path path_;
};

namespace fs {

// The whole of an open file descriptor's content; throws Error naming `path`. `size_hint`, the
// size fstat gave, lets it read straight into a string of the right size.
std::string read_all(int fd, const std::filesystem::path& path, std::size_t size_hint = 0);
// Writes all of `bytes`; throws Error naming `path`.
void write_all(int fd, std::string_view bytes, const std::filesystem::path& path);

}  // namespace fs
}  // namespace apexnpu
