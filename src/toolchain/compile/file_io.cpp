#include "compile/file_io.h"

#include <fmt/core.h>
#include <fmt/std.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "core/error.h"

namespace apexnpu {
namespace fs = std::filesystem;

std::optional<std::string> try_read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(ss).str();
}

std::string read_file(const fs::path& path) {
  auto bytes = try_read_file(path);
  if (!bytes) throw Error(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
  return *std::move(bytes);
}

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return fmt::format("{}-{:x}-{}", ::getpid(),
                     std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffff,
                     counter.fetch_add(1));
}

void write_file_atomic(const fs::path& path, std::string_view bytes, fs::perms perms) {
  const fs::path tmp = path.parent_path() / fmt::format(".{}.tmp-{}", path.filename().string(),
                                                        unique_suffix());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(fmt::format("cannot write {}: {}", tmp.string(), std::strerror(errno)),
                          "check that the directory exists and is writable");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw Error(fmt::format("cannot write {} (disk full?)", tmp.string()));
    }
  }
  std::error_code ec;
  fs::permissions(tmp, perms, ec);
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error(fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message()));
  }
}

TempDir& TempDir::operator=(TempDir&& o) noexcept {
  if (this != &o) {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
    path_ = std::exchange(o.path_, {});
  }
  return *this;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace apexnpu
