#include "wheel/metadata.h"

#include <fmt/core.h>

#include "core/error.h"
#include "fs/file_io.h"

namespace apexnpu::wheel {

std::string render_template(const std::string& text, const std::map<std::string, std::string>& values,
                            const std::string& name) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    if (open == std::string::npos) {
      out.append(text, i);
      break;
    }
    out.append(text, i, open - i);
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) throw Error(fmt::format("{}: unclosed '{{'", name));
    const std::string key = text.substr(open + 1, close - open - 1);
    const auto it = values.find(key);
    if (it == values.end())
      throw Error(fmt::format("{}: unknown placeholder {{{}}}", name, key),
                  "placeholders: name, version, platform, tag, tag_lines, apexnpu_version, purelib");
    out += it->second;
    i = close + 1;
  }
  return out;
}

std::string render_wheel_template(const std::filesystem::path& templates_dir, const std::string& file,
                                  const std::map<std::string, std::string>& values) {
  const auto path = templates_dir / "wheel" / (file + ".in");
  return render_template(read_file(path), values, path.string());
}

HeaderFields parse_header_fields(const std::string& text) {
  HeaderFields f;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find('\n', i);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(i, end - i);
    i = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;                          // the body (long description) starts
    if (line[0] == ' ' || line[0] == '\t') continue;  // continuation line
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    f.first.emplace(key, value);
    f.all.emplace(std::move(key), std::move(value));
  }
  return f;
}

}  // namespace apexnpu::wheel
