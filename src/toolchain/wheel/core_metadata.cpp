#include "wheel/core_metadata.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>

#include "wheel/metadata.h"
#include "wheel/pep508.h"

namespace apexnpu::wheel {
namespace {

struct FieldRule {
  std::string_view name;   // as the specification spells it
  std::string_view added;  // the Metadata-Version that introduced it
  bool multiple;           // may be given more than once
};

constexpr FieldRule kFields[] = {
    {"Metadata-Version", "1.0", false},
    {"Name", "1.0", false},
    {"Version", "1.0", false},
    {"Platform", "1.0", true},
    {"Summary", "1.0", false},
    {"Description", "1.0", false},
    {"Keywords", "1.0", false},
    {"Home-page", "1.0", false},
    {"Author", "1.0", false},
    {"Author-email", "1.0", false},
    {"License", "1.0", false},
    {"Supported-Platform", "1.1", true},
    {"Download-URL", "1.1", false},
    {"Classifier", "1.1", true},
    {"Requires", "1.1", true},
    {"Provides", "1.1", true},
    {"Obsoletes", "1.1", true},
    {"Maintainer", "1.2", false},
    {"Maintainer-email", "1.2", false},
    {"Requires-Dist", "1.2", true},
    {"Requires-Python", "1.2", false},
    {"Requires-External", "1.2", true},
    {"Project-URL", "1.2", true},
    {"Provides-Dist", "1.2", true},
    {"Obsoletes-Dist", "1.2", true},
    {"Description-Content-Type", "2.1", false},
    {"Provides-Extra", "2.1", true},
    {"Dynamic", "2.2", true},
    {"License-Expression", "2.4", false},
    {"License-File", "2.4", true},
    {"Import-Name", "2.5", true},
    {"Import-Namespace", "2.5", true},
};
constexpr std::array<std::string_view, 8> kVersions = {"1.0", "1.1", "1.2", "2.1",
                                                       "2.2", "2.3", "2.4", "2.5"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const FieldRule* rule_for(std::string_view name) {
  const std::string wanted = lower(name);
  for (const FieldRule& r : kFields)
    if (lower(r.name) == wanted) return &r;
  return nullptr;
}

int version_rank(std::string_view v) {
  const auto it = std::find(kVersions.begin(), kVersions.end(), v);
  return it == kVersions.end() ? -1 : static_cast<int>(it - kVersions.begin());
}

std::optional<std::string> content_type_problem(std::string_view value) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto semi = value.find(';', start);
    std::string part(value.substr(start, semi - start));
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    parts.push_back(part);
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  const std::string type = lower(parts[0]);
  if (type != "text/plain" && type != "text/x-rst" && type != "text/markdown")
    return fmt::format("'{}' is not text/plain, text/x-rst or text/markdown", parts[0]);
  for (std::size_t p = 1; p < parts.size(); ++p) {
    const auto eq = parts[p].find('=');
    if (eq == std::string::npos) return fmt::format("parameter '{}' has no value", parts[p]);
    const std::string key = lower(parts[p].substr(0, eq));
    std::string val = parts[p].substr(eq + 1);
    if (val.size() >= 2 && val.front() == '"' && val.back() == '"') val = val.substr(1, val.size() - 2);
    if (key == "charset" && lower(val) != "utf-8")
      return fmt::format("charset '{}': only UTF-8 is allowed", val);
    if (key == "variant" && type == "text/markdown" && val != "GFM" && val != "CommonMark")
      return fmt::format("Markdown variant '{}' is neither GFM nor CommonMark", val);
  }
  return std::nullopt;
}

// Why one field's value is invalid, or nothing.
std::optional<std::string> value_problem(const FieldRule& rule, const HeaderField& f) {
  const std::string_view name = rule.name;
  if (name == "Name" && !valid_project_name(f.value))
    return std::string("not a valid project name (letters and digits, with '.', '_' or '-' inside)");
  if (name == "Version" && !valid_version(f.value)) return std::string("not a PEP 440 version");
  if (name == "Provides-Extra" && !valid_project_name(f.value)) return std::string("not a valid extra name");
  if (name == "Requires-Python") return specifier_set_problem(f.value);
  if (name == "Requires-Dist") return requirement_problem(f.value);
  if (name == "Description-Content-Type") return content_type_problem(f.value);
  if (name == "Summary" && f.continued) return std::string("a summary is one line");
  if (name == "Dynamic") {
    const std::string d = lower(f.value);
    if (d == "name" || d == "version" || d == "metadata-version")
      return fmt::format("{} cannot be dynamic", f.value);
    if (!rule_for(f.value)) return fmt::format("'{}' is not a metadata field", f.value);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> core_metadata_problems(const std::string& text) {
  std::vector<std::string> problems;
  const std::vector<HeaderField> fields = read_header_block(text, problems);
  std::string declared;
  for (const HeaderField& f : fields)
    if (lower(f.name) == "metadata-version") declared = f.value;
  const int declared_rank = version_rank(declared);
  if (!declared.empty() && declared_rank < 0)
    problems.push_back(
        fmt::format("Metadata-Version: '{}' is not a metadata version (1.0 to 2.5)", declared));

  std::map<std::string, int> seen;
  for (const HeaderField& f : fields) {
    const FieldRule* rule = rule_for(f.name);
    if (rule == nullptr) {
      problems.push_back(fmt::format("line {}: '{}' is not a core metadata field", f.line, f.name));
      continue;
    }
    if (!rule->multiple && seen[std::string(rule->name)]++ == 1)
      problems.push_back(fmt::format("line {}: {} is given more than once", f.line, rule->name));
    if (declared_rank >= 0 && version_rank(rule->added) > declared_rank)
      problems.push_back(
          fmt::format("line {}: {} is a Metadata-Version {} field, but METADATA "
                      "declares {}",
                      f.line, rule->name, rule->added, declared));
    if (const auto why = value_problem(*rule, f))
      problems.push_back(fmt::format("line {}: {}: '{}' is invalid: {}", f.line, rule->name, f.value, *why));
  }
  return problems;
}

}  // namespace apexnpu::wheel
