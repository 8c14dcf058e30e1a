#include "elf/dynamic_info.h"

#include <fmt/core.h>

#include <map>

#include "core/error.h"

namespace apexnpu::elf {
namespace {

constexpr std::uint32_t kDynamic = 6;                  // SHT_DYNAMIC
constexpr std::uint32_t kDynamicSymbols = 11;          // SHT_DYNSYM
constexpr std::uint32_t kVersionNeeds = 0x6ffffffe;    // SHT_GNU_verneed
constexpr std::uint32_t kVersionSymbols = 0x6fffffff;  // SHT_GNU_versym
constexpr std::uint64_t kNeeded = 1, kSoname = 14;     // DT_NEEDED, DT_SONAME
constexpr std::uint16_t kHiddenVersion = 0x8000;       // versym bit: not the default version

std::optional<Section> section_of_type(const ElfFile& file, std::uint32_t type) {
  for (const Section& s : file.sections())
    if (s.type == type) return s;
  return std::nullopt;
}

void read_dynamic_entries(const ElfFile& file, const Section& dynamic, DynamicInfo& info) {
  const std::string_view data = file.contents(dynamic);
  const std::string_view strings =
      file.contents(file.section_at(dynamic.link, "the dynamic section's string table"));
  const unsigned word = file.word_size();
  for (std::uint64_t at = 0; at + 2 * word <= data.size(); at += 2 * word) {
    const std::uint64_t tag = file.read(data, at, word, "a dynamic entry");
    const std::uint64_t value = file.read(data, at + word, word, "a dynamic entry");
    if (tag == 0) break;  // DT_NULL
    if (tag == kNeeded) info.needed.push_back(file.read_string(strings, value, "a DT_NEEDED name"));
    if (tag == kSoname) info.soname = file.read_string(strings, value, "the DT_SONAME");
  }
}

// Version index (vna_other) -> its requirement's place in info.versions.
std::map<std::uint16_t, std::size_t> read_version_needs(const ElfFile& file, const Section& needs,
                                                        DynamicInfo& info) {
  const std::string_view data = file.contents(needs);
  const std::string_view strings =
      file.contents(file.section_at(needs.link, "the version needs' string table"));
  std::map<std::uint16_t, std::size_t> by_index;
  std::uint64_t at = 0;
  for (std::uint64_t n = 0; n < needs.info; ++n) {  // sh_info: the number of Verneed entries
    const auto count = file.read(data, at + 2, 2, "a Verneed entry");
    const std::string library =
        file.read_string(strings, file.read(data, at + 4, 4, "a Verneed entry"), "a Verneed file name");
    std::uint64_t aux = at + file.read(data, at + 8, 4, "a Verneed entry");
    for (std::uint64_t k = 0; k < count; ++k) {
      const auto index = static_cast<std::uint16_t>(file.read(data, aux + 6, 2, "a Vernaux entry"));
      const std::string version =
          file.read_string(strings, file.read(data, aux + 8, 4, "a Vernaux entry"), "a Vernaux version name");
      by_index[index & ~kHiddenVersion] = info.versions.size();
      info.versions.push_back({library, version, {}});
      const std::uint64_t next = file.read(data, aux + 12, 4, "a Vernaux entry");
      if (next == 0) break;
      aux += next;
    }
    const std::uint64_t next = file.read(data, at + 12, 4, "a Verneed entry");
    if (next == 0) break;
    at += next;
  }
  return by_index;
}

// Attributes each undefined dynamic symbol to the requirement its version index names.
void attribute_symbols(const ElfFile& file, const std::map<std::uint16_t, std::size_t>& by_index,
                       DynamicInfo& info) {
  const auto symbols = section_of_type(file, kDynamicSymbols);
  const auto versions = section_of_type(file, kVersionSymbols);
  if (!symbols || !versions) return;
  const std::string_view table = file.contents(*symbols);
  const std::string_view names =
      file.contents(file.section_at(symbols->link, "the dynamic symbols' string table"));
  const std::string_view indices = file.contents(*versions);
  const std::uint64_t entry = file.is_64bit() ? 24 : 16;
  // Elf64_Sym: name u32, info u8, other u8, shndx u16, ...; Elf32_Sym: name, value, size, info,
  // other, shndx.
  const std::uint64_t shndx_at = file.is_64bit() ? 6 : 14;
  for (std::uint64_t i = 1; i < table.size() / entry; ++i) {
    if (file.read(table, i * entry + shndx_at, 2, "a dynamic symbol") != 0) continue;  // defined
    const auto index =
        static_cast<std::uint16_t>(file.read(indices, i * 2, 2, "a version index") & ~kHiddenVersion);
    const auto found = by_index.find(index);
    if (found == by_index.end()) continue;  // local, global or a version of this file's own
    info.versions[found->second].symbols.push_back(file.read_string(
        names, file.read(table, i * entry, 4, "a dynamic symbol"), "a dynamic symbol's name"));
  }
}

}  // namespace

DynamicInfo read_dynamic_info(const ElfFile& file) {
  DynamicInfo info;
  if (const auto dynamic = section_of_type(file, kDynamic)) read_dynamic_entries(file, *dynamic, info);
  if (const auto needs = section_of_type(file, kVersionNeeds)) {
    const auto by_index = read_version_needs(file, *needs, info);
    attribute_symbols(file, by_index, info);
  }
  return info;
}

}  // namespace apexnpu::elf
