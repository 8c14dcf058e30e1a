#pragma once
// The dist-info text files, rendered from templates/wheel/*.in ({name} placeholders).
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace apexnpu::wheel {

// Replaces each {key} of `text` with its value; an unknown {key} is an Error naming the template.
std::string render_template(const std::string& text, const std::map<std::string, std::string>& values,
                            const std::string& template_name);

// Reads templates/wheel/<file>.in from `templates_dir` and renders it.
std::string render_wheel_template(const std::filesystem::path& templates_dir, const std::string& file,
                                  const std::map<std::string, std::string>& values);

// One "Name: value" header of METADATA or WHEEL (RFC 822 style), its continuation lines joined
// to its value with '\n'.
struct HeaderField {
  std::string name;
  std::string value;
  int line = 0;            // where it starts, from 1
  bool continued = false;  // had continuation lines
};
// The header block of `text` (up to the first blank line, where a body starts). A line that is
// no header, or continues none, is left out and said in `problems`.
std::vector<HeaderField> read_header_block(const std::string& text, std::vector<std::string>& problems);

// "Key: value" headers of METADATA / WHEEL, each value's first line, for lookups by key.
struct HeaderFields {
  std::map<std::string, std::string> first_values;     // each key's first value
  std::multimap<std::string, std::string> all_values;  // every value of each key, in order
};
HeaderFields parse_header_fields(const std::string& text);

}  // namespace apexnpu::wheel
