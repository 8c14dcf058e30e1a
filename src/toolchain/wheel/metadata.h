#pragma once
// The dist-info text files, rendered from templates/wheel/*.in ({name} placeholders).
#include <filesystem>
#include <map>
#include <string>

namespace apexnpu::wheel {

// Replaces each {key} of `text` with its value; an unknown {key} is an Error naming the template.
std::string render_template(const std::string& text, const std::map<std::string, std::string>& values,
                            const std::string& template_name);

// Reads templates/wheel/<file>.in from `templates_dir` and renders it.
std::string render_wheel_template(const std::filesystem::path& templates_dir, const std::string& file,
                                  const std::map<std::string, std::string>& values);

// "Key: value" headers of METADATA / WHEEL (first occurrence of each key; all values in `all`).
struct HeaderFields {
  std::map<std::string, std::string> first;
  std::multimap<std::string, std::string> all;
};
HeaderFields parse_header_fields(const std::string& text);

}  // namespace apexnpu::wheel
