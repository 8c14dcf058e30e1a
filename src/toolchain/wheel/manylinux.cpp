#include "wheel/manylinux.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::wheel {
namespace {

// "2.17" -> {2, 17}; none when a part is not a number.
std::optional<std::vector<int>> numeric_version(std::string_view text) {
  std::vector<int> parts;
  while (true) {
    const auto dot = text.find('.');
    const std::string_view part = text.substr(0, dot);
    int value = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) return std::nullopt;
    parts.push_back(value);
    if (dot == std::string_view::npos) return parts;
    text.remove_prefix(dot + 1);
  }
}

// Whether a required version ("GLIBC_2.14") is allowed: its prefix is governed and the version
// no newer than the newest, or one of the non-numeric ones; versions of other prefixes belong to
// the libraries' own interfaces and are not policed.
std::optional<std::string> version_problem(const ManylinuxPolicy& policy, const std::string& arch,
                                           const std::string& requirement) {
  if (requirement == "GLIBC_PRIVATE") return "GLIBC_PRIVATE is glibc's internal interface";
  const auto underscore = requirement.find('_');
  if (underscore == std::string::npos) return std::nullopt;
  const std::string prefix = requirement.substr(0, underscore);
  const std::string version = requirement.substr(underscore + 1);
  const auto& newest = policy.newest.at(arch);
  const auto limit = newest.find(prefix);
  if (limit == newest.end()) return std::nullopt;
  if (const auto arch_also = policy.also.find(arch); arch_also != policy.also.end())
    if (const auto also = arch_also->second.find(prefix);
        also != arch_also->second.end() &&
        std::find(also->second.begin(), also->second.end(), version) != also->second.end())
      return std::nullopt;
  if (limit->second == "none") return fmt::format("{} allows no {} version on {}", policy.name, prefix, arch);
  const auto wanted = numeric_version(version);
  const auto allowed = numeric_version(limit->second);
  if (wanted && allowed && *wanted <= *allowed) return std::nullopt;
  return fmt::format("{} is newer than {}'s {}_{}", requirement, policy.name, prefix, limit->second);
}

std::vector<std::string> string_list(const nlohmann::json& j) { return j.get<std::vector<std::string>>(); }

}  // namespace

std::optional<std::string> architecture_of_machine(unsigned machine) {
  switch (machine) {
    case 62:
      return "x86_64";  // EM_X86_64
    case 183:
      return "aarch64";  // EM_AARCH64
  }
  return std::nullopt;
}

ManylinuxPolicies parse_manylinux_policies(const std::string& text, const std::string& source) {
  try {
    const auto doc = nlohmann::json::parse(text);
    ManylinuxPolicies out;
    out.libraries = string_list(doc.at("libraries"));
    out.loaders = doc.at("loaders").get<std::map<std::string, std::string>>();
    for (const auto& p : doc.at("policies")) {
      ManylinuxPolicy policy;
      policy.name = p.at("name").get<std::string>();
      policy.alias = p.value("alias", std::string());
      int major = 0;
      if (std::sscanf(policy.name.c_str(), "manylinux_%d_%d", &major, &policy.glibc_minor) != 2)
        throw Error(fmt::format("{}: policy name '{}' is not manylinux_2_N", source, policy.name));
      policy.newest = p.at("newest").get<std::map<std::string, std::map<std::string, std::string>>>();
      policy.also =
          p.at("also").get<std::map<std::string, std::map<std::string, std::vector<std::string>>>>();
      policy.more_libraries = p.value("more_libraries", std::vector<std::string>{});
      policy.forbidden_symbols =
          p.at("forbidden_symbols").get<std::map<std::string, std::vector<std::string>>>();
      if (!out.policies.empty() && out.policies.back().glibc_minor >= policy.glibc_minor)
        throw Error(fmt::format("{}: policies must go from the lowest glibc up ({} after {})", source,
                                policy.name, out.policies.back().name));
      out.policies.push_back(std::move(policy));
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{} is malformed: {}", source, e.what()));
  }
}

ManylinuxPolicies load_manylinux_policies(const std::filesystem::path& templates_dir) {
  const auto path = templates_dir / "manylinux_policy.json";
  return parse_manylinux_policies(read_file(path), path.string());
}

WheelBinary read_wheel_binary(const std::string& wheel_path, std::string bytes) {
  const elf::ElfFile file(std::move(bytes), wheel_path);
  const auto architecture = architecture_of_machine(file.machine());
  if (!architecture)
    throw Error(fmt::format("{}: ELF machine {} is neither x86_64 nor aarch64", wheel_path, file.machine()));
  return {wheel_path, *architecture, elf::read_dynamic_info(file)};
}

std::vector<std::string> policy_violations(const ManylinuxPolicies& policies, const ManylinuxPolicy& policy,
                                           const std::vector<WheelBinary>& binaries) {
  std::vector<std::string> out;
  for (const WheelBinary& b : binaries) {
    const auto newest = policy.newest.find(b.architecture);
    if (newest == policy.newest.end()) {
      out.push_back(fmt::format("{}: {} has no {} variant", b.path, policy.name, b.architecture));
      continue;
    }
    const auto loader = policies.loaders.find(b.architecture);
    for (const std::string& library : b.dynamic.needed) {
      const auto listed = [&](const std::vector<std::string>& names) {
        return std::find(names.begin(), names.end(), library) != names.end();
      };
      const bool allowed = listed(policies.libraries) || listed(policy.more_libraries) ||
                           (loader != policies.loaders.end() && loader->second == library);
      if (!allowed)
        out.push_back(fmt::format("{} links {}, which {} does not allow", b.path, library, policy.name));
    }
    for (const elf::VersionRequirement& v : b.dynamic.versions) {
      if (const auto problem = version_problem(policy, b.architecture, v.version))
        out.push_back(fmt::format("{} needs {} from {} ({}) for {}", b.path, v.version, v.library, *problem,
                                  fmt::join(v.symbols, ", ")));
      const auto forbidden = policy.forbidden_symbols.find(v.library);
      if (forbidden == policy.forbidden_symbols.end()) continue;
      for (const std::string& symbol : v.symbols)
        if (std::find(forbidden->second.begin(), forbidden->second.end(), symbol) != forbidden->second.end())
          out.push_back(
              fmt::format("{} uses {} from {}, which {} lacks", b.path, symbol, v.library, policy.name));
    }
  }
  return out;
}

std::string PlatformTags::str() const { return fmt::format("{}", fmt::join(tags, ".")); }

PlatformTags platform_tags(const ManylinuxPolicies& policies, const std::string& architecture,
                           const std::vector<WheelBinary>& binaries) {
  PlatformTags result;
  for (const ManylinuxPolicy& policy : policies.policies) {
    if (!policy.newest.contains(architecture)) continue;
    auto violations = policy_violations(policies, policy, binaries);
    if (violations.empty()) {
      result.tags.push_back(policy.name + "_" + architecture);
      if (!policy.alias.empty()) result.tags.push_back(policy.alias + "_" + architecture);
      result.reasons.clear();
      return result;
    }
    // Keep what the highest policy still objects to: the cause of a linux_ fallback.
    result.reasons = std::move(violations);
  }
  result.tags.push_back("linux_" + architecture);
  return result;
}

}  // namespace apexnpu::wheel
