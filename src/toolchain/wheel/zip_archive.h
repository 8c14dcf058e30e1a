#pragma once
// A deterministic zip writer (zlib raw deflate) and a whole-archive reader for checking what was
// written.
// Writer: entries in the order given, one fixed timestamp, fixed Unix permissions, no extra
// fields, so the same files and epoch give the same bytes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::wheel {

struct ZipEntry {
  std::string name;
  std::string bytes;
  std::uint32_t mode = 0100644;  // Unix st_mode, stored in the external attributes
};

// Zip timestamps are DOS local time from 1980; earlier epochs are clamped to 1980-01-01.
inline constexpr std::int64_t kZipEpochMin = 315532800;  // 1980-01-01T00:00:00Z

// Throws Error (naming it) on a name that member_name_problem refuses, rather than write it.
std::string write_zip(const std::vector<ZipEntry>& entries, std::int64_t unix_time);
// All entries at once, for tests and small archives (`verify` streams them: zip_reader.h).
// Throws Error (naming `source_name`) where ZipReader does.
std::vector<ZipEntry> read_zip(std::string_view bytes, const std::string& source_name);

}  // namespace apexnpu::wheel
