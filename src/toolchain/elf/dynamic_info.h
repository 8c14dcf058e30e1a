#pragma once
// What a shared object asks of the dynamic loader: the libraries it needs (DT_NEEDED) and the
// symbol versions it requires of them (.gnu.version_r), each with the undefined symbols that
// ask for it, so a policy check can name the offending symbol.
#include <string>
#include <vector>

#include "elf/elf_file.h"

namespace apexnpu::elf {

struct VersionRequirement {
  std::string library;               // "libc.so.6"
  std::string version;               // "GLIBC_2.17"
  std::vector<std::string> symbols;  // the undefined symbols bound to that version
};

struct DynamicInfo {
  std::string soname;               // DT_SONAME, empty when none
  std::vector<std::string> needed;  // DT_NEEDED, in order
  std::vector<VersionRequirement> versions;
};

// Empty for a file without a dynamic section (an object file). Throws Error naming the file
// when a table is malformed.
DynamicInfo read_dynamic_info(const ElfFile& file);

}  // namespace apexnpu::elf
