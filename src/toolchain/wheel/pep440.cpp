#include "wheel/pep440.h"

#include <fmt/core.h>

#include <cctype>

#include "core/error.h"

namespace apexnpu::wheel {

std::string validate_local_label(std::string_view label) {
  const std::string shown = fmt::format("--version-label={}", label);
  if (label.empty())
    throw UsageError(shown + ": the local version label is empty",
                     "use letters, digits and dots, e.g. --version-label=ascend");
  if (label.find('-') != std::string_view::npos)
    throw UsageError(shown +
                         ": '-' is not allowed (it would end the version field of the wheel "
                         "file name; '0.1-ascend' is the form setuptools >= 66 rejects)",
                     "separate parts with '.', e.g. --version-label=ascend.rc1");
  std::string out;
  bool segment_start = true;
  for (char c : label) {
    if (c == '.') {
      if (segment_start)
        throw UsageError(shown +
                             ": empty segment (a label cannot start or end with '.' or have "
                             "'..')",
                         "e.g. --version-label=ascend.1");
      segment_start = true;
      out += c;
      continue;
    }
    if (!std::isalnum(static_cast<unsigned char>(c)))
      throw UsageError(fmt::format("{}: '{}' is not allowed in a PEP 440 local version label", shown, c),
                       "use only ASCII letters, digits and '.', e.g. --version-label=ascend.1");
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    segment_start = false;
  }
  if (segment_start)
    throw UsageError(shown + ": empty segment (a label cannot start or end with '.' or have '..')",
                     "e.g. --version-label=ascend.1");
  return out;
}

std::string wheel_version(std::string_view label) { return fmt::format("{}+{}", kPublicVersion, label); }

std::string escape_file_name_part(std::string_view part) {
  std::string out;
  bool in_run = false;
  for (char c : part) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+') {
      out += c;
      in_run = false;
    } else if (!in_run) {
      out += '_';
      in_run = true;
    }
  }
  return out;
}

std::string dist_info_dir(std::string_view name, std::string_view version) {
  return fmt::format("{}-{}.dist-info", escape_file_name_part(name), escape_file_name_part(version));
}

std::string wheel_file_name(std::string_view name, std::string_view version, std::string_view tag) {
  return fmt::format("{}-{}-{}.whl", escape_file_name_part(name), escape_file_name_part(version), tag);
}

}  // namespace apexnpu::wheel
