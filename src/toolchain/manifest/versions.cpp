#include "manifest/versions.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <regex>

namespace apexnpu::manifest {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string release_of(const std::string& v) {
  static const std::regex re(R"((\d+(?:\.\d+)*?)(?:\.?(?:rc|post|a|b|dev)\d*)?)", std::regex::icase);
  std::smatch m;
  if (std::regex_match(v, m, re)) return m[1].str();
  return v;
}

bool is_version(const std::string& text) {
  static const std::regex re(R"(\d+(\.\d+)*([.-]?(rc|post|a|b|dev)\d*(\.\d+)*)*(\+[0-9A-Za-z.]+)?)",
                             std::regex::icase);
  return std::regex_match(text, re);
}

std::string without_local(const std::string& version) { return version.substr(0, version.find('+')); }

std::vector<int> release_numbers(const std::string& version) {
  std::vector<int> numbers;
  static const std::regex number(R"(^(\d+)\.?)");
  std::smatch m;
  std::string rest = release_of(without_local(version));
  while (std::regex_search(rest, m, number)) {
    // A number too long for an int counts as the largest: it is newer than anything listed.
    int n = std::numeric_limits<int>::max();
    const std::string digits = m[1].str();
    std::from_chars(digits.data(), digits.data() + digits.size(), n);
    numbers.push_back(n);
    rest = m.suffix();
  }
  return numbers;
}

int compare_releases(const std::string& a, const std::string& b) {
  std::vector<int> x = release_numbers(a), y = release_numbers(b);
  const std::size_t n = std::max(x.size(), y.size());
  x.resize(n, 0);
  y.resize(n, 0);
  return x < y ? -1 : (x == y ? 0 : 1);
}

bool names_exactly(const std::string& query, const std::string& listed) {
  return lower(query) == lower(listed);
}

bool names_loosely(const std::string& query, const std::string& listed) {
  const std::string q = lower(query), l = lower(listed);
  return q == l || lower(release_of(l)) == q || l.starts_with(q + ".");
}

}  // namespace apexnpu::manifest
