#pragma once
// An ELF file's header and section table, read from its bytes without running or loading it, so
// a module built for another architecture reads the same. ELF32 and ELF64, either byte order.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace apexnpu::elf {

struct Section {
  std::string name;
  std::uint32_t type = 0;  // SHT_*
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
  std::uint32_t info = 0;
  std::uint64_t entry_size = 0;
};

inline constexpr std::uint32_t kSectionNoBits = 8;  // SHT_NOBITS: occupies no file bytes

class ElfFile {
 public:
  // Throws Error naming `source` and what is malformed when `bytes` are not a well-formed ELF
  // header and section table.
  ElfFile(std::string bytes, std::string source);

  const std::string& source() const noexcept { return source_; }
  bool is_64bit() const noexcept { return is_64bit_; }
  bool little_endian() const noexcept { return little_endian_; }
  std::uint16_t file_type() const noexcept { return file_type_; }  // ET_DYN = 3 for a .so
  std::uint16_t machine() const noexcept { return machine_; }      // EM_X86_64 = 62, EM_AARCH64 = 183
  const std::vector<Section>& sections() const noexcept { return sections_; }

  // The first section of that name, or none.
  std::optional<Section> find_section(std::string_view name) const;
  // A section's bytes (empty for SHT_NOBITS); throws Error when it reaches past the file.
  std::string_view contents(const Section& section) const;
  // The section at an index (a section's link or info field); Error when there is none.
  const Section& section_at(std::uint64_t index, const char* what) const;

  // An unsigned integer of `width` bytes at `offset` in `data` (a section's contents), in the
  // file's byte order; Error naming `what` when it reaches past the data.
  std::uint64_t read(std::string_view data, std::uint64_t offset, unsigned width, const char* what) const;
  // A NUL-terminated string at `offset` of a string table; Error when it does not end inside.
  std::string read_string(std::string_view table, std::uint64_t offset, const char* what) const;
  // The width of an address or size in this file (8 or 4).
  unsigned word_size() const noexcept { return is_64bit_ ? 8 : 4; }

 private:
  std::uint64_t read(std::uint64_t offset, unsigned width, const char* what) const {
    return read(bytes_, offset, width, what);
  }
  void read_sections(std::uint64_t table, std::uint16_t entry_size, std::uint64_t count,
                     std::uint64_t names_index);
  Section read_section_header(std::uint64_t at) const;

  std::string bytes_;
  std::string source_;
  bool is_64bit_ = true;
  bool little_endian_ = true;
  std::uint16_t file_type_ = 0;
  std::uint16_t machine_ = 0;
  std::vector<Section> sections_;
};

// Reads the file at `path` (Error when it cannot be read or is not ELF).
ElfFile read_elf_file(const std::filesystem::path& path);

}  // namespace apexnpu::elf
