#include "wheel/load_wheel.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "wheel/member_names.h"

namespace apexnpu::wheel {
namespace stdfs = std::filesystem;

namespace {

// The files verify reads whole: the dist-info's (METADATA, WHEEL, RECORD) and the extension
// modules whose ELF it checks (as platform_check.cpp picks them).
bool read_whole(const std::string& path) {
  const auto slash = path.find('/');
  if (slash != std::string::npos && path.substr(0, slash).ends_with(".dist-info")) return true;
  return path.ends_with(".so") || path.find(".so.") != std::string::npos;
}

// Adds one streamed file to `w`, keeping it when verify reads it whole.
class FileSink {
 public:
  FileSink(WheelUnderCheck& w, std::string path, std::uint64_t& kept, const LoadLimits& limits,
           std::string where)
      : w_(w),
        path_(std::move(path)),
        keep_(read_whole(path_)),
        kept_(kept),
        limits_(limits),
        where_(std::move(where)) {}
  void operator()(std::string_view piece) {
    hasher_.update(piece);
    digest_.size += piece.size();
    if (!keep_) return;
    kept_ += piece.size();
    if (kept_ > limits_.max_kept_bytes)
      throw Error(
          fmt::format("{}: the dist-info files and extension modules hold more than the "
                      "{} bytes apexnpu reads",
                      where_, limits_.max_kept_bytes));
    bytes_.append(piece);
  }
  void finish() {
    digest_.sha256 = hasher_.finish();
    w_.digests[path_] = digest_;
    if (keep_) w_.files[path_] = std::move(bytes_);
  }

 private:
  WheelUnderCheck& w_;
  std::string path_;
  bool keep_;
  std::uint64_t& kept_;
  const LoadLimits& limits_;
  std::string where_;
  Sha256 hasher_;
  FileDigest digest_;
  std::string bytes_;
};

// A read-only mapping of a whole file: the zip's pages are read as the reader touches them.
class MappedFile {
 public:
  explicit MappedFile(const stdfs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
      if (errno == ELOOP) throw Error(fmt::format("{} is a symlink; refusing to follow it", path.string()));
      throw Error(fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
    }
    struct stat st {};
    const int rc = ::fstat(fd, &st);
    if (rc == 0 && st.st_size > 0) {
      size_ = static_cast<std::size_t>(st.st_size);
      data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    }
    const int err = errno;
    ::close(fd);
    if (rc != 0 || data_ == MAP_FAILED)
      throw Error(fmt::format("cannot read {}: {}", path.string(), std::strerror(err)));
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (size_ > 0) ::munmap(data_, size_);
  }
  std::string_view bytes() const {
    return size_ == 0 ? std::string_view() : std::string_view(static_cast<const char*>(data_), size_);
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// Streams one regular file of a layout into `sink`, refusing growth past `budget` bytes.
void stream_layout_file(const stdfs::path& file, std::uint64_t budget, const std::string& where,
                        FileSink& sink) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", where, std::strerror(errno)));
  std::unique_ptr<int, void (*)(int*)> guard(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
  std::unique_ptr<char[]> buffer(new char[ZipReader::kChunkBytes]);
  std::uint64_t total = 0;
  while (true) {
    const ssize_t n = ::read(fd, buffer.get(), ZipReader::kChunkBytes);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("{}: cannot read: {}", where, std::strerror(errno)));
    if (n == 0) break;
    total += static_cast<std::uint64_t>(n);
    if (total > budget) throw Error(fmt::format("{}: grew while being read", where));
    sink(std::string_view(buffer.get(), static_cast<std::size_t>(n)));
  }
  sink.finish();
}

// One entry of a layout directory, checked as the zip reader checks an entry.
void check_layout_entry(const stdfs::directory_entry& entry, const std::string& rel, const std::string& where,
                        MemberNames& names) {
  if (auto problem = member_name_problem(rel)) throw Error(fmt::format("{}: the name {}", where, *problem));
  if (entry.is_symlink()) throw Error(where + ": a symlink (a wheel holds regular files only)");
  if (!entry.is_regular_file()) throw Error(where + ": not a regular file");
  if (auto clash = names.add(rel)) throw Error(fmt::format("{}: the name {}", where, *clash));
}

WheelUnderCheck load_layout(const stdfs::path& dir, const LoadLimits& limits) {
  WheelUnderCheck w;
  MemberNames names;
  std::uint64_t total = 0, kept = 0;
  std::size_t count = 0;
  std::error_code ec;
  for (stdfs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory() && !it->is_symlink()) continue;
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    const std::string where = fmt::format("{}: {}", dir.string(), printable_name(rel));
    check_layout_entry(*it, rel, where, names);
    if (++count > limits.zip.max_entries)
      throw Error(fmt::format("{}: more than the {} files allowed", dir.string(), limits.zip.max_entries));
    const std::uint64_t size = it->file_size(ec);
    if (ec) throw Error(fmt::format("{}: cannot read: {}", where, ec.message()));
    if (size > limits.zip.max_inflated_bytes - total)
      throw Error(fmt::format("{}: {} bytes; with the files before it, more than the {} allowed", where, size,
                              limits.zip.max_inflated_bytes));
    total += size;
    FileSink sink(w, rel, kept, limits, where);
    stream_layout_file(it->path(), size, where, sink);
  }
  if (ec) throw Error(fmt::format("cannot read {}: {}", dir.string(), ec.message()));
  return w;
}

}  // namespace

WheelUnderCheck load_wheel_zip(std::string_view bytes, const std::string& source, const LoadLimits& limits) {
  const ZipReader reader(bytes, source, limits.zip);
  WheelUnderCheck w;
  w.wheel_file_name = stdfs::path(source).filename().string();
  std::uint64_t kept = 0;
  for (const ZipMember& m : reader.members()) {
    if (m.directory) continue;  // directory entries carry no file
    FileSink sink(w, m.name, kept, limits, fmt::format("{}: entry {}", source, printable_name(m.name)));
    reader.stream(m, [&](std::string_view piece) { sink(piece); });
    sink.finish();
  }
  return w;
}

WheelUnderCheck load_wheel(const stdfs::path& path, const LoadLimits& limits) {
  std::error_code ec;
  if (stdfs::is_directory(path, ec)) return load_layout(path, limits);
  if (!stdfs::is_regular_file(path, ec))
    throw Error(fmt::format("{}: no such wheel or layout directory", path.string()),
                "pass a .whl file or the wheel layout directory written by `apexnpu build`");
  const MappedFile file(path);
  return load_wheel_zip(file.bytes(), path.string(), limits);
}

}  // namespace apexnpu::wheel
