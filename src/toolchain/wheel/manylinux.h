#pragma once
// PEP 600 platform tags from a wheel's own binaries: the libraries and symbol versions each
// extension needs (elf/dynamic_info.h) against the policies of templates/manylinux_policy.json.
// The build tags the lowest policy that holds; verify checks that a claimed tag holds.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "elf/dynamic_info.h"

namespace apexnpu::wheel {

struct ManylinuxPolicy {
  std::string name;   // "manylinux_2_17"
  std::string alias;  // "manylinux2014", or empty
  int glibc_minor = 0;
  // architecture -> version prefix (GLIBC, CXXABI, GLIBCXX, GCC, ZLIB, LIBATOMIC) -> newest
  // allowed "2.17", or "none": no version of that prefix at all
  std::map<std::string, std::map<std::string, std::string>> newest;
  // architecture -> prefix -> the non-numeric versions allowed ("TM_1", "FLOAT128")
  std::map<std::string, std::map<std::string, std::vector<std::string>>> also;
  std::map<std::string, std::vector<std::string>> forbidden_symbols;  // library -> symbols
  std::vector<std::string> more_libraries;  // allowed here beyond ManylinuxPolicies::libraries
};

struct ManylinuxPolicies {
  std::vector<std::string> libraries;          // allowed by every policy
  std::map<std::string, std::string> loaders;  // architecture -> dynamic loader soname
  std::vector<ManylinuxPolicy> policies;       // lowest first
};

ManylinuxPolicies load_manylinux_policies(const std::filesystem::path& templates_dir);
ManylinuxPolicies parse_manylinux_policies(const std::string& text, const std::string& source);

// One extension module of a wheel, as the policies see it.
struct WheelBinary {
  std::string path;          // inside the wheel, for messages
  std::string architecture;  // "x86_64", "aarch64" (from the ELF machine)
  elf::DynamicInfo dynamic;
};

// Reads an ELF file as a WheelBinary; Error for a machine this tool does not tag.
WheelBinary read_wheel_binary(const std::string& wheel_path, std::string bytes);

// Why `binaries` do not fit `policy` (empty: they do): each offending library or symbol version
// with the binary and the symbols that ask for it.
std::vector<std::string> policy_violations(const ManylinuxPolicies& policies, const ManylinuxPolicy& policy,
                                           const std::vector<WheelBinary>& binaries);

// The platform part of the tag: manylinux_2_N_<arch> of the lowest policy that holds, plus its
// legacy alias; linux_<arch> with the reasons when none holds.
struct PlatformTags {
  std::vector<std::string> tags;     // "manylinux_2_17_x86_64", "manylinux2014_x86_64"
  std::vector<std::string> reasons;  // why the lowest policies fail (for a linux_ fallback)
  std::string str() const;           // the tags joined with '.', as in a wheel file name
};
PlatformTags platform_tags(const ManylinuxPolicies& policies, const std::string& architecture,
                           const std::vector<WheelBinary>& binaries);

// The architecture of an ELF e_machine, or none.
std::optional<std::string> architecture_of_machine(unsigned machine);

}  // namespace apexnpu::wheel
