#include "wheel/pep508.h"

#include <fmt/core.h>

#include <array>
#include <cctype>
#include <regex>
#include <vector>

namespace apexnpu::wheel {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// PEP 440's public version and local label, in the spellings it accepts before normalising.
const std::string kPublic = R"(v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*)"
                            R"((?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?)"
                            R"((?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?)"
                            R"((?:[-_.]?dev[-_.]?[0-9]*)?)";
const std::string kLocal = R"(\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)";

const std::regex& version_re() {
  static const std::regex re(kPublic + "(?:" + kLocal + ")?", std::regex::icase);
  return re;
}

// One specifier: the operator decides which versions may follow it.
std::optional<std::string> specifier_problem(std::string_view spec) {
  static const std::array<std::string_view, 8> ops = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
  spec = trim(spec);
  std::string_view op;
  for (std::string_view candidate : ops)
    if (spec.starts_with(candidate)) {
      op = candidate;
      break;
    }
  if (op.empty()) return fmt::format("'{}' does not start with a comparison (==, >=, ~=, ...)", spec);
  const std::string version(trim(spec.substr(op.size())));
  if (version.empty()) return fmt::format("'{}' has no version", spec);
  if (op == "===") {
    if (version.find_first_of(" \t,;") != std::string::npos)
      return fmt::format("'{}': an arbitrary equality takes one word", spec);
    return std::nullopt;
  }
  static const std::regex release_prefix(R"(v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*\.\*)", std::regex::icase);
  static const std::regex public_only(kPublic, std::regex::icase);
  bool ok = false;
  if (op == "==" || op == "!=")
    ok = std::regex_match(version, version_re()) || std::regex_match(version, release_prefix);
  else
    ok = std::regex_match(version, public_only);  // no local label, no wildcard
  if (ok && op == "~=" && version.find('.') == std::string::npos) {
    return fmt::format("'{}': ~= needs a version of two parts or more", spec);
  }
  if (!ok) return fmt::format("'{}' is not a valid version for {}", version, op);
  return std::nullopt;
}

// Environment markers (PEP 508): or-ed and-ed comparisons of marker variables and quoted strings.
class MarkerParser {
 public:
  explicit MarkerParser(std::string_view text) : text_(text) {}

  std::optional<std::string> parse() {
    if (auto p = expression()) return p;
    skip_space();
    if (at_ < text_.size()) return fmt::format("unexpected '{}' in the marker", text_.substr(at_));
    return std::nullopt;
  }

 private:
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool word(std::string_view w) {  // a keyword followed by a non-identifier character
    skip_space();
    if (!text_.substr(at_).starts_with(w)) return false;
    const std::size_t end = at_ + w.size();
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_'))
      return false;
    at_ = end;
    return true;
  }
  std::optional<std::string> expression() {
    if (auto p = conjunction()) return p;
    while (word("or"))
      if (auto p = conjunction()) return p;
    return std::nullopt;
  }
  std::optional<std::string> conjunction() {
    if (auto p = atom()) return p;
    while (word("and"))
      if (auto p = atom()) return p;
    return std::nullopt;
  }
  std::optional<std::string> atom() {
    skip_space();
    if (at_ < text_.size() && text_[at_] == '(') {
      ++at_;
      if (auto p = expression()) return p;
      skip_space();
      if (at_ >= text_.size() || text_[at_] != ')') return std::string("a '(' in the marker is not closed");
      ++at_;
      return std::nullopt;
    }
    if (auto p = value()) return p;
    if (auto p = comparison()) return p;
    return value();
  }
  std::optional<std::string> value() {
    static const std::array<std::string_view, 14> variables = {"python_version",
                                                               "python_full_version",
                                                               "os_name",
                                                               "sys_platform",
                                                               "platform_release",
                                                               "platform_system",
                                                               "platform_version",
                                                               "platform_machine",
                                                               "platform_python_implementation",
                                                               "implementation_name",
                                                               "implementation_version",
                                                               "extra",
                                                               "extras",
                                                               "dependency_groups"};
    skip_space();
    if (at_ < text_.size() && (text_[at_] == '\'' || text_[at_] == '"')) {
      const auto close = text_.find(text_[at_], at_ + 1);
      if (close == std::string_view::npos) return std::string("a quoted string in the marker is not closed");
      at_ = close + 1;
      return std::nullopt;
    }
    for (std::string_view v : variables)
      if (word(v)) return std::nullopt;
    return fmt::format("'{}' is neither a marker variable nor a quoted string", text_.substr(at_));
  }
  std::optional<std::string> comparison() {
    static const std::array<std::string_view, 8> ops = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
    skip_space();
    for (std::string_view op : ops)
      if (text_.substr(at_).starts_with(op)) {
        at_ += op.size();
        return std::nullopt;
      }
    if (word("in")) return std::nullopt;
    if (word("not") && word("in")) return std::nullopt;
    return fmt::format("'{}' is not a marker comparison", text_.substr(at_));
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

}  // namespace

bool valid_version(std::string_view text) { return std::regex_match(std::string(trim(text)), version_re()); }

bool valid_project_name(std::string_view text) {
  static const std::regex re(R"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)");
  return std::regex_match(std::string(text), re);
}

std::optional<std::string> specifier_set_problem(std::string_view text) {
  if (trim(text).empty()) return std::nullopt;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    if (auto p = specifier_problem(text.substr(start, comma - start))) return p;
    if (comma == std::string_view::npos) return std::nullopt;
    start = comma + 1;
  }
}

std::optional<std::string> requirement_problem(std::string_view text) {
  text = trim(text);
  std::string_view marker;
  bool has_marker = false;
  if (const auto semi = text.find(';'); semi != std::string_view::npos) {
    marker = text.substr(semi + 1);
    has_marker = true;
    text = trim(text.substr(0, semi));
  }
  std::size_t n = 0;
  while (n < text.size() && (std::isalnum(static_cast<unsigned char>(text[n])) || text[n] == '.' ||
                             text[n] == '_' || text[n] == '-'))
    ++n;
  const std::string_view name = text.substr(0, n);
  if (!valid_project_name(name)) return fmt::format("'{}' does not start with a valid project name", text);
  std::string_view rest = trim(text.substr(n));
  if (rest.starts_with('[')) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) return std::string("the extras' '[' is not closed");
    std::string_view extras = rest.substr(1, close - 1);
    std::size_t start = 0;
    while (!trim(extras).empty()) {
      const std::size_t comma = extras.find(',', start);
      if (!valid_project_name(trim(extras.substr(start, comma - start))))
        return fmt::format("'{}' is not a valid list of extras", extras);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    rest = trim(rest.substr(close + 1));
  }
  if (rest.starts_with('@')) {
    const std::string_view url = trim(rest.substr(1));
    if (url.empty() || url.find_first_of(" \t") != std::string_view::npos ||
        url.find(':') == std::string_view::npos)
      return fmt::format("'{}' is not a URL", url);
  } else if (rest.starts_with('(')) {
    if (!rest.ends_with(')')) return std::string("the version's '(' is not closed");
    if (auto p = specifier_set_problem(rest.substr(1, rest.size() - 2))) return p;
  } else if (!rest.empty()) {
    if (auto p = specifier_set_problem(rest)) return p;
  }
  if (has_marker) {
    if (trim(marker).empty()) return std::string("';' is followed by no marker");
    if (auto p = MarkerParser(marker).parse()) return p;
  }
  return std::nullopt;
}

}  // namespace apexnpu::wheel
