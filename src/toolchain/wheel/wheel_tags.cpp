#include "wheel/wheel_tags.h"

namespace apexnpu::wheel {
namespace {

std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = s.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(s.substr(start, dot - start));
  parts.push_back(s.substr(start));
  return parts;
}

}  // namespace

std::vector<std::string> expand_tag(const std::string& tag) {
  const auto first = tag.find('-');
  const auto last = tag.rfind('-');
  if (first == std::string::npos || first == last) return {tag};
  std::vector<std::string> tags;
  for (const auto& python : split_dots(tag.substr(0, first)))
    for (const auto& abi : split_dots(tag.substr(first + 1, last - first - 1)))
      for (const auto& platform : split_dots(tag.substr(last + 1)))
        tags.push_back(python + "-" + abi + "-" + platform);
  return tags;
}

}  // namespace apexnpu::wheel
