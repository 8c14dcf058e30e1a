#include "wheel/verify.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "core/data_dir.h"
#include "core/error.h"
#include "core/sha256.h"
#include "wheel/core_metadata.h"
#include "wheel/metadata.h"
#include "wheel/pep440.h"
#include "wheel/platform_check.h"
#include "wheel/wheel_tags.h"

namespace apexnpu::wheel {
namespace {

bool unsafe_path(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.find('\\') != std::string::npos) return true;
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t slash = std::min(p.find('/', start), p.size());
    const std::string part = p.substr(start, slash - start);
    if (part == ".." || part == "." || part.empty()) return true;
    start = slash + 1;
  }
  return false;
}

// Every file's size and sha256: as loaded, or hashed now for the files only held in memory.
using Digests = std::map<std::string, FileDigest>;
Digests all_digests(const WheelUnderCheck& w) {
  Digests all = w.digests;
  for (const auto& [path, bytes] : w.files)
    if (!all.count(path)) all[path] = {bytes.size(), sha256(bytes)};
  return all;
}

// What is wrong with a RECORD row's hash field for a file of digest `actual`, if anything.
std::optional<std::string> hash_problem(const std::string& hash, const Sha256::Digest& actual) {
  const auto eq = hash.find('=');
  if (hash.empty() || eq == std::string::npos) return "no hash (expected sha256=<urlsafe base64>)";
  const std::string algo = hash.substr(0, eq);
  const std::string value = hash.substr(eq + 1);
  if (algo == "md5" || algo == "sha1")
    return fmt::format("{} hash; the wheel format requires sha256 or stronger", algo);
  if (algo != "sha256") return fmt::format("{} hash; apexnpu verifies sha256 only", algo);
  if (value.find('=') != std::string::npos)
    return "base64 with '=' padding; RECORD hashes are unpadded urlsafe base64";
  if (value.find_first_of("+/") != std::string::npos)
    return "base64 with '+' or '/'; RECORD hashes use the urlsafe alphabet ('-', '_')";
  const auto decoded = urlsafe_b64_decode(value);
  if (!decoded || decoded->size() != actual.size()) return "hash is not a valid urlsafe base64 sha256 digest";
  const std::string_view digest(reinterpret_cast<const char*>(actual.data()), actual.size());
  if (*decoded != digest)
    return fmt::format("hash mismatch (RECORD {}, file has sha256={})", hash, urlsafe_b64_nopad(digest));
  return std::nullopt;
}

void check_record(const WheelUnderCheck& w, const Digests& digests, const std::string& record_path,
                  VerifyReport& r) {
  auto v = [&](std::string s) { r.violations.push_back(std::move(s)); };
  const auto parsed = parse_record(w.files.at(record_path));
  if (!parsed) {
    v(fmt::format("{}: {}", record_path, parsed.error()));
    return;
  }
  const std::vector<RecordRow>& rows = *parsed;
  std::set<std::string> listed;
  for (const auto& row : rows) {
    const std::string where = fmt::format("RECORD line {} ({})", row.line, row.path);
    if (!listed.insert(row.path).second) v(where + ": listed twice");
    if (unsafe_path(row.path)) {
      v(where + ": unsafe path (absolute, empty part, '.' or '..')");
      continue;
    }
    if (row.path == record_path) {
      if (!row.hash.empty() || !row.size.empty())
        v(where + ": RECORD's own row must have empty hash and size");
      continue;
    }
    const auto file = digests.find(row.path);
    if (file == digests.end()) {
      v(where + ": file listed in RECORD is missing from the wheel");
      continue;
    }
    if (auto problem = hash_problem(row.hash, file->second.sha256)) v(where + ": " + *problem);
    if (row.size.empty() || row.size.find_first_not_of("0123456789") != std::string::npos) {
      v(where + ": size is not a decimal number");
    } else if (row.size != std::to_string(file->second.size)) {
      v(fmt::format("{}: size mismatch (RECORD {}, file has {})", where, row.size, file->second.size));
    }
  }
  for (const auto& [path, digest] : digests) {
    if (listed.count(path) || path == record_path) continue;
    if (path == record_path + ".jws" || path == record_path + ".p7s") continue;
    v(fmt::format("{}: file not listed in RECORD", path));
  }
}

void check_extension_suffixes(const Digests& digests, const std::vector<std::string>& tags, VerifyReport& r) {
  std::set<std::string> allowed;  // accepted ".cpython-...-....so" / ".abi3.so" endings
  for (const auto& t : tags) {
    const auto a = t.find('-'), b = t.rfind('-');
    if (a == std::string::npos || a == b) continue;
    const std::string abi = t.substr(a + 1, b - a - 1), plat = t.substr(b + 1);
    if (abi == "abi3") allowed.insert(".abi3.so");
    if (const auto soabi = expected_soabi(abi, plat); !soabi.empty()) allowed.insert("." + soabi + ".so");
  }
  static const std::regex ext_re(R"(^[A-Za-z_][A-Za-z0-9_]*(\..+)?\.so$)");
  for (const auto& [path, digest] : digests) {
    if (!path.ends_with(".so")) continue;
    const std::string base = path.substr(path.rfind('/') + 1);
    const auto dot = base.find('.');
    const std::string suffix = base.substr(dot);
    if (!allowed.count(suffix))
      r.violations.push_back(
          fmt::format("{}: extension suffix '{}' does not match the wheel tag{} {}", path, suffix,
                      tags.size() == 1 ? "" : "s",
                      tags.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(tags, ", "))));
  }
}

void check_paths(const Digests& digests, VerifyReport& r) {
  for (const auto& [path, digest] : digests) {
    if (unsafe_path(path)) r.violations.push_back(fmt::format("{}: unsafe path in the wheel", path));
    // Bytecode belongs to the Python that installs the wheel (installers compile their own);
    // a .pyc shipped is stale for every other version, and RECORD cannot track the ones made.
    if (path.ends_with(".pyc") || path.ends_with(".pyo"))
      r.violations.push_back(
          fmt::format("{}: compiled bytecode in the wheel (installers compile their own)", path));
  }
}

// The one .dist-info directory, or nullopt (reported) when there is none or more than one.
std::optional<std::string> find_dist_info(const Digests& digests, VerifyReport& r) {
  std::set<std::string> dist_infos;
  for (const auto& [path, digest] : digests) {
    const auto slash = path.find('/');
    if (slash != std::string::npos && path.substr(0, slash).ends_with(".dist-info"))
      dist_infos.insert(path.substr(0, slash));
  }
  if (dist_infos.empty()) {
    r.violations.push_back("no .dist-info directory");
    return std::nullopt;
  }
  if (dist_infos.size() > 1) {
    r.violations.push_back(
        fmt::format("more than one .dist-info directory: {}", fmt::join(dist_infos, ", ")));
    return std::nullopt;
  }
  return *dist_infos.begin();
}

void check_metadata(const WheelUnderCheck& w, const std::string& di, VerifyReport& r) {
  auto v = [&](std::string s) { r.violations.push_back(std::move(s)); };
  const std::string metadata_path = di + "/METADATA";
  if (!w.files.count(metadata_path)) {
    v(metadata_path + ": missing");
    return;
  }
  const auto m = parse_header_fields(w.files.at(metadata_path));
  for (const char* key : {"Metadata-Version", "Name", "Version"})
    if (!m.first_values.count(key)) v(fmt::format("{}: no {} field", metadata_path, key));
  for (const std::string& problem : core_metadata_problems(w.files.at(metadata_path)))
    v(fmt::format("{}: {}", metadata_path, problem));
  if (!m.first_values.count("Name") || !m.first_values.count("Version")) return;
  const std::string expected = dist_info_dir(m.first_values.at("Name"), m.first_values.at("Version"));
  // Names compare case-insensitively with '-', '_' and '.' alike (PEP 503).
  auto norm = [](std::string s) {
    for (auto& c : s) c = (c == '-' || c == '.') ? '_' : static_cast<char>(std::tolower(c));
    return s;
  };
  if (norm(expected) != norm(di))
    v(fmt::format("{}: .dist-info name does not match METADATA (Name {}, Version {}: expected {})", di,
                  m.first_values.at("Name"), m.first_values.at("Version"), expected));
}

// WHEEL's fields; its tags go to the report for the checks that follow.
void check_wheel_file(const WheelUnderCheck& w, const std::string& di, VerifyReport& r) {
  auto v = [&](std::string s) { r.violations.push_back(std::move(s)); };
  const std::string wheel_path = di + "/WHEEL";
  if (!w.files.count(wheel_path)) {
    v(wheel_path + ": missing");
    return;
  }
  const auto h = parse_header_fields(w.files.at(wheel_path));
  if (!h.first_values.count("Wheel-Version") || !h.first_values.at("Wheel-Version").starts_with("1."))
    v(wheel_path + ": Wheel-Version missing or not 1.x");
  if (!h.first_values.count("Root-Is-Purelib")) v(wheel_path + ": no Root-Is-Purelib field");
  for (auto [it, end] = h.all_values.equal_range("Tag"); it != end; ++it) r.tags.push_back(it->second);
  if (r.tags.empty()) v(wheel_path + ": no Tag field");
}

// The .whl's file name against the dist-info and WHEEL's tags.
void check_file_name(const std::string& file_name, const std::string& di, VerifyReport& r) {
  auto v = [&](std::string s) { r.violations.push_back(std::move(s)); };
  static const std::regex name_re(R"(([^-]+)-([^-]+)(-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl)");
  std::smatch m;
  if (!std::regex_match(file_name, m, name_re)) {
    v(fmt::format("{}: not a valid wheel file name (name-version-python-abi-platform.whl)", file_name));
    return;
  }
  const std::string expected_di = m[1].str() + "-" + m[2].str() + ".dist-info";
  if (expected_di != di)
    v(fmt::format("{}: .dist-info name does not match the file name {} (expected {})", di, file_name,
                  expected_di));
  // A compressed tag set (PEP 425: "manylinux_2_17_x86_64.manylinux2014_x86_64") stands for
  // every combination of its parts.
  for (const auto& file_tag : expand_tag(m[4].str() + "-" + m[5].str() + "-" + m[6].str()))
    if (!r.tags.empty() && std::find(r.tags.begin(), r.tags.end(), file_tag) == r.tags.end())
      v(fmt::format("{}: file name tag {} is not among WHEEL's tags", file_name, file_tag));
}

}  // namespace

std::string expected_soabi(const std::string& abi, const std::string& platform) {
  static const std::regex abi_re(R"(cp(\d+[a-z]*))");
  static const std::regex plat_re(R"((?:many)?linux(?:\d+|_\d+_\d+)?_(.+))");
  std::smatch am, pm;
  if (!std::regex_match(abi, am, abi_re) || !std::regex_match(platform, pm, plat_re)) return {};
  std::string arch = pm[1].str();
  return fmt::format("cpython-{}-{}-linux-gnu", am[1].str(), arch);
}

VerifyReport verify_wheel(const WheelUnderCheck& w, const ManylinuxPolicies& policies) {
  VerifyReport r;
  const Digests digests = all_digests(w);
  r.files = digests.size();
  check_paths(digests, r);
  const auto di = find_dist_info(digests, r);
  if (!di) return r;
  r.dist_info = *di;
  check_metadata(w, *di, r);
  check_wheel_file(w, *di, r);
  if (w.wheel_file_name) check_file_name(*w.wheel_file_name, *di, r);
  const std::string record_path = *di + "/RECORD";
  if (!w.files.count(record_path))
    r.violations.push_back(record_path + ": missing");
  else
    check_record(w, digests, record_path, r);
  check_extension_suffixes(digests, r.tags, r);
  for (auto& violation : platform_tag_violations(w.files, r.tags, policies))
    r.violations.push_back(std::move(violation));
  return r;
}

VerifyReport verify_wheel(const WheelUnderCheck& w) {
  return verify_wheel(w, load_manylinux_policies(templates_dir()));
}

}  // namespace apexnpu::wheel
