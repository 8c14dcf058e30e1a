#include "wheel/platform_check.h"

#include <fmt/core.h>

#include <map>
#include <set>

#include "core/error.h"

namespace apexnpu::wheel {
namespace {

// The ELF extension modules of the wheel; unreadable ones become violations.
std::vector<WheelBinary> wheel_binaries(const WheelFiles& files, std::vector<std::string>& out) {
  std::vector<WheelBinary> binaries;
  for (const auto& [path, bytes] : files) {
    if (!path.ends_with(".so") && path.find(".so.") == std::string::npos) continue;
    try {
      binaries.push_back(read_wheel_binary(path, bytes));
    } catch (const Error& e) {  // the ELF reader stops at the first bad byte: one finding, go on
      out.push_back(e.what());
    }
  }
  return binaries;
}

// The policy that governs a claim of glibc 2.N: the highest listed one not above it.
const ManylinuxPolicy* governing_policy(const ManylinuxPolicies& policies, int minor,
                                        const std::string& arch) {
  const ManylinuxPolicy* found = nullptr;
  for (const ManylinuxPolicy& p : policies.policies)
    if (p.glibc_minor <= minor && p.newest.contains(arch)) found = &p;
  return found;
}

void check_claim(const std::string& platform, const std::vector<WheelBinary>& binaries,
                 const ManylinuxPolicies& policies, std::vector<std::string>& out) {
  for (const WheelBinary& b : binaries) {
    if (platform.ends_with("_" + b.architecture)) continue;
    out.push_back(fmt::format("{}: an {} binary in a wheel tagged {}", b.path, b.architecture, platform));
  }
  std::set<std::string> arches;
  for (const WheelBinary& b : binaries) arches.insert(b.architecture);
  for (const std::string& arch : arches) {
    const auto minor = manylinux_glibc_minor(platform, arch);
    if (!minor) continue;  // linux_<arch>: no promise beyond the architecture
    const ManylinuxPolicy* policy = governing_policy(policies, *minor, arch);
    if (policy == nullptr) {
      out.push_back(
          fmt::format("{}: no manylinux policy for {} at or below glibc 2.{}", platform, arch, *minor));
      continue;
    }
    for (auto& v : policy_violations(policies, *policy, binaries))
      out.push_back(fmt::format("tag {}: {}", platform, v));
  }
}

}  // namespace

std::optional<int> manylinux_glibc_minor(const std::string& platform, const std::string& arch) {
  static const std::map<std::string, int> legacy = {
      {"manylinux1", 5}, {"manylinux2010", 12}, {"manylinux2014", 17}};
  const std::string suffix = "_" + arch;
  if (!platform.ends_with(suffix)) return std::nullopt;
  const std::string stem = platform.substr(0, platform.size() - suffix.size());
  if (const auto it = legacy.find(stem); it != legacy.end()) return it->second;
  int major = 0, minor = 0, consumed = 0;
  if (std::sscanf(stem.c_str(), "manylinux_%d_%d%n", &major, &minor, &consumed) == 2 &&
      consumed == static_cast<int>(stem.size()) && major == 2)
    return minor;
  return std::nullopt;
}

std::vector<std::string> platform_tag_violations(const WheelFiles& files,
                                                 const std::vector<std::string>& tags,
                                                 const ManylinuxPolicies& policies) {
  std::vector<std::string> out;
  const std::vector<WheelBinary> binaries = wheel_binaries(files, out);
  if (binaries.empty()) return out;
  std::set<std::string> platforms;
  for (const std::string& tag : tags) platforms.insert(tag.substr(tag.rfind('-') + 1));
  for (const std::string& platform : platforms) {
    if (platform == "any") continue;  // the extension-suffix check reports modules there
    check_claim(platform, binaries, policies, out);
  }
  return out;
}

}  // namespace apexnpu::wheel
