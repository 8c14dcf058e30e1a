#pragma once
// Whole-file reads and writes. Writes go to a temporary name beside the target and are renamed
// into place, so a reader never sees half a file.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace apexnpu {

std::string read_file(const std::filesystem::path& path);              // throws Error
std::optional<std::string> try_read_file(const std::filesystem::path& path);
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes,
                       std::filesystem::perms perms = std::filesystem::perms::owner_read |
                                                      std::filesystem::perms::owner_write |
                                                      std::filesystem::perms::group_read |
                                                      std::filesystem::perms::others_read);
// A name no other process will pick: pid, thread and a counter.
std::string unique_suffix();

// A directory removed (recursively) when this goes out of scope, unless released.
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

}  // namespace apexnpu
