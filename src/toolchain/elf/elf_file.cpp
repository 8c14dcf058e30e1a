#include "elf/elf_file.h"

#include <fmt/core.h>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::elf {
namespace {

constexpr unsigned char kClass32 = 1, kClass64 = 2;
constexpr unsigned char kDataLittle = 1, kDataBig = 2;
constexpr std::uint16_t kSectionIndexEscape = 0xffff;  // SHN_XINDEX: the real index is elsewhere

}  // namespace

ElfFile::ElfFile(std::string bytes, std::string source)
    : bytes_(std::move(bytes)), source_(std::move(source)) {
  if (bytes_.size() < 16 || bytes_.compare(0, 4,
                                           "\x7f"
                                           "ELF") != 0)
    throw Error(fmt::format("{} is not an ELF file (no \\x7fELF magic)", source_));
  const auto ident = [&](std::size_t i) { return static_cast<unsigned char>(bytes_[i]); };
  if (ident(4) != kClass32 && ident(4) != kClass64)
    throw Error(fmt::format("{}: unknown ELF class {}", source_, ident(4)));
  if (ident(5) != kDataLittle && ident(5) != kDataBig)
    throw Error(fmt::format("{}: unknown ELF byte order {}", source_, ident(5)));
  is_64bit_ = ident(4) == kClass64;
  little_endian_ = ident(5) == kDataLittle;

  file_type_ = static_cast<std::uint16_t>(read(16, 2, "the ELF header"));
  machine_ = static_cast<std::uint16_t>(read(18, 2, "the ELF header"));
  // Offsets of e_shoff, e_shentsize, e_shnum, e_shstrndx differ by class.
  const std::uint64_t table = is_64bit_ ? read(40, 8, "the ELF header") : read(32, 4, "the ELF header");
  const unsigned field = is_64bit_ ? 58 : 46;
  const auto entry_size = static_cast<std::uint16_t>(read(field, 2, "the ELF header"));
  std::uint64_t count = read(field + 2, 2, "the ELF header");
  std::uint64_t names_index = read(field + 4, 2, "the ELF header");
  if (table == 0) return;  // no section table
  const std::uint16_t expected = is_64bit_ ? 64 : 40;
  if (entry_size != expected)
    throw Error(fmt::format("{}: section headers of {} bytes, expected {}", source_, entry_size, expected));
  // Many sections: the count and the names' index are kept in section 0's header instead.
  const Section first = read_section_header(table);
  if (count == 0) count = first.size;
  if (names_index == kSectionIndexEscape) names_index = first.link;
  read_sections(table, entry_size, count, names_index);
}

std::uint64_t ElfFile::read(std::string_view data, std::uint64_t offset, unsigned width,
                            const char* what) const {
  if (offset > data.size() || data.size() - offset < width)
    throw Error(fmt::format("{}: {} reaches past the end of {} ({} bytes, read at {})", source_, what,
                            data.data() == bytes_.data() ? "the file" : "its section", data.size(), offset));
  std::uint64_t value = 0;
  for (unsigned i = 0; i < width; ++i) {
    const auto byte = static_cast<unsigned char>(data[offset + (little_endian_ ? width - 1 - i : i)]);
    value = (value << 8) | byte;
  }
  return value;
}

std::string ElfFile::read_string(std::string_view table, std::uint64_t offset, const char* what) const {
  const auto end = offset < table.size() ? table.find('\0', offset) : std::string_view::npos;
  if (end == std::string_view::npos)
    throw Error(fmt::format("{}: {} is outside its string table", source_, what));
  return std::string(table.substr(offset, end - offset));
}

const Section& ElfFile::section_at(std::uint64_t index, const char* what) const {
  if (index >= sections_.size())
    throw Error(
        fmt::format("{}: {} names section {}, but there are {}", source_, what, index, sections_.size()));
  return sections_[index];
}

Section ElfFile::read_section_header(std::uint64_t at) const {
  // Where each field of Elf64_Shdr / Elf32_Shdr is; addresses and sizes are one word wide.
  struct Layout {
    unsigned flags, offset, size, link, info, entry_size, word;
  };
  constexpr Layout k64{8, 24, 32, 40, 44, 56, 8}, k32{8, 16, 20, 24, 28, 36, 4};
  const Layout& l = is_64bit_ ? k64 : k32;
  const char* what = "a section header";
  Section s;
  s.type = static_cast<std::uint32_t>(read(at + 4, 4, what));
  s.flags = read(at + l.flags, l.word, what);
  s.offset = read(at + l.offset, l.word, what);
  s.size = read(at + l.size, l.word, what);
  s.link = static_cast<std::uint32_t>(read(at + l.link, 4, what));
  s.info = static_cast<std::uint32_t>(read(at + l.info, 4, what));
  s.entry_size = read(at + l.entry_size, l.word, what);
  return s;
}

void ElfFile::read_sections(std::uint64_t table, std::uint16_t entry_size, std::uint64_t count,
                            std::uint64_t names_index) {
  if (count > bytes_.size() / entry_size)  // each header needs its bytes in the file
    throw Error(fmt::format("{}: {} section headers cannot fit in a file of {} bytes", source_, count,
                            bytes_.size()));
  std::vector<std::uint64_t> name_offsets;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t at = table + i * entry_size;
    sections_.push_back(read_section_header(at));
    name_offsets.push_back(read(at, 4, "a section header"));
  }
  if (names_index == 0) return;  // SHN_UNDEF: the sections have no names
  if (names_index >= count)
    throw Error(fmt::format("{}: the section names are in section {}, but there are {}", source_, names_index,
                            count));
  const std::string_view names = contents(sections_[names_index]);
  for (std::size_t i = 0; i < sections_.size(); ++i) {
    const std::string what = fmt::format("the name of section {}", i);
    sections_[i].name = read_string(names, name_offsets[i], what.c_str());
  }
}

std::optional<Section> ElfFile::find_section(std::string_view name) const {
  for (const Section& s : sections_)
    if (s.name == name) return s;
  return std::nullopt;
}

std::string_view ElfFile::contents(const Section& s) const {
  if (s.type == kSectionNoBits) return {};
  if (s.offset > bytes_.size() || bytes_.size() - s.offset < s.size)
    throw Error(
        fmt::format("{}: section '{}' ({} bytes at {}) reaches past the end of the file "
                    "({} bytes)",
                    source_, s.name, s.size, s.offset, bytes_.size()));
  return std::string_view(bytes_).substr(s.offset, s.size);
}

ElfFile read_elf_file(const std::filesystem::path& path) { return ElfFile(read_file(path), path.string()); }

}  // namespace apexnpu::elf
