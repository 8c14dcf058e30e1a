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

std::vector<HeaderField> read_header_block(const std::string& text, std::vector<std::string>& problems) {
  std::vector<HeaderField> fields;
  std::size_t i = 0;
  int line_no = 0;
  while (i < text.size()) {
    std::size_t end = text.find('\n', i);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(i, end - i);
    i = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) break;
    if (line[0] == ' ' || line[0] == '\t') {
      if (fields.empty())
        problems.push_back(fmt::format("line {} continues no field", line_no));
      else {
        fields.back().value += "\n" + line;
        fields.back().continued = true;
      }
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos || colon == 0) {
      problems.push_back(fmt::format("line {} is not a 'Field: value' header: '{}'", line_no, line));
      continue;
    }
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    fields.push_back({line.substr(0, colon), value, line_no});
  }
  return fields;
}

HeaderFields parse_header_fields(const std::string& text) {
  std::vector<std::string> problems;  // core_metadata_problems reports them for METADATA
  HeaderFields f;
  for (HeaderField& field : read_header_block(text, problems)) {
    std::string value = field.value.substr(0, field.value.find('\n'));
    f.first_values.emplace(field.name, value);
    f.all_values.emplace(std::move(field.name), std::move(value));
  }
  return f;
}

}  // namespace apexnpu::wheel
