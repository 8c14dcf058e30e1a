#pragma once
// A zip reader that streams: it checks the whole archive's structure up front (central
// directory, every local header, names, sizes) and then inflates one entry at a time through a
// fixed buffer, so memory stays bounded whatever the archive declares. It refuses what zip
// readers disagree on: overlapping entries (the zip bomb that shares compressed data), a local
// header that names or sizes an entry differently from the central directory, duplicate and
// case-colliding names, names that are not UTF-8 or are too long (member_names.h), entries that
// are not regular files or directories (symlinks), encryption and zip64; and it caps the total
// inflated size and the entry count. Every error names the archive, and the entry.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::wheel {

// 2 GiB inflated in all, 50,000 entries: ten times the largest wheels on PyPI hold.
inline constexpr std::uint64_t kMaxInflatedBytes = std::uint64_t{2} << 30;
inline constexpr std::size_t kMaxEntries = 50'000;

struct ZipLimits {
  std::uint64_t max_inflated_bytes = kMaxInflatedBytes;  // the declared sizes' sum
  std::size_t max_entries = kMaxEntries;
};

struct ZipMember {
  std::string name;
  std::uint32_t mode = 0;  // Unix st_mode from the external attributes (0: not made on Unix)
  std::uint64_t size = 0;  // inflated size, as declared (streaming holds the entry to it)
  bool directory = false;  // the name ends in '/'
  std::uint32_t method = 0, crc = 0;
  std::size_t data_offset = 0, compressed_size = 0;
};

class ZipReader {
 public:
  // `bytes` must outlive the reader. Throws Error naming `source` when the archive is damaged,
  // ambiguous or beyond the limits.
  ZipReader(std::string_view bytes, std::string source, ZipLimits limits = {});

  const std::vector<ZipMember>& members() const { return members_; }
  const std::string& source() const { return source_; }

  // Inflates `m` into `sink` in pieces of at most kChunkBytes, checking size and CRC as it goes;
  // throws Error naming the archive and the entry.
  static constexpr std::size_t kChunkBytes = 64 * 1024;
  void stream(const ZipMember& m, const std::function<void(std::string_view)>& sink) const;
  std::string read(const ZipMember& m) const;  // the whole entry, for the ones a caller keeps

 private:
  void read_central_directory(std::size_t end_of_central);
  void check_local_header(ZipMember& m, std::size_t local_offset, std::uint32_t central_flags);
  void check_layout(std::size_t central_offset);

  std::string_view bytes_;
  std::string source_;
  ZipLimits limits_;
  std::vector<ZipMember> members_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // [local header, end of data)
};

}  // namespace apexnpu::wheel
